#pragma once
// Synthetic datasets whose samples count many cells (core/vocabulary/sample_cells.h), shaped
// like the public validation sets people evaluate with torchmetrics under DDP, so every
// sampler, padding, limit and sync setting can be tried on them:
//   voc2012:val        1,449 images of ~500 x 375, 21 classes (background dominant, 1 to 3
//                      object classes an image), boundary pixels ignore_index 255
//   cityscapes:val     500 images of 1024 x 2048, 19 classes, ~10 to 16 classes an image,
//                      unlabelled pixels 255
//   ade20k:val         2,000 images of 256..768 x 256..768 (~512 x 512 on average), 150
//                      long-tailed classes; "other" (label 0) is 255 after reduce_zero_label
//   seg:n=N,classes=K[,size=HxW][,per-image=A-B][,zipf=S][,background=F][,ignore=F]
//   conll2003:test     3,453 sentences of 1..124 words, 9 BIO tags (O dominant); the -100 of
//                      special tokens and continuation sub-words is not a cell
//   tokens:n=N,classes=K[,max-length=L]
//   coco-multilabel:val  5,000 items, 80 labels, ~2.9 present an item
//   multilabel:n=N,labels=L[,per-item=K]
// Every kind takes ",seed=S" (default 0) and ",first=N". A sample's truth depends only on
// (seed, index): first=N is the first N samples of the full set, and a sample is the same
// whichever rank evaluates it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/vocabulary/sample_cells.h"

namespace shardlens {

// What the dataset holds before any prediction: row i is sample i's true classes with their
// counts, each as the cell (t, t) a perfect prediction gives. Ignored pixels / tokens are not
// cells; sample_size and ignored keep them, as a dump's arrays do (sum of the row's cells +
// ignored == sample_size).
struct DenseTruth {
  Task task = Task::Segmentation;
  CellTable truth;                       // classes = the matrix's (2 L for multilabel)
  std::vector<std::string> class_names;  // one per class of the matrix
  int ignore_index = -1;                 // 255 (segmentation), -100 (tokens), -1 (multilabel)
  std::vector<int64_t> sample_size;
  std::vector<int64_t> ignored;
  std::string source;  // the spec

  int32_t classes() const { return truth.classes; }
  int64_t size() const { return truth.rows(); }
};

// Whether `spec` names one of the kinds above (by its kind alone; options are checked when
// it is read).
bool is_dense_dataset(const std::string& spec);

// What a dense spec declares without drawing a sample: samples, matrix classes, task and the
// dataset's ignore index. Throws InputError for a spec of these kinds that does not parse.
struct DenseDeclared {
  int64_t samples = 0;
  int32_t classes = 0;
  Task task = Task::Segmentation;
  int ignore_index = -1;
};
DenseDeclared declared_dense(const std::string& spec);

// Draws the dataset. Throws InputError naming "--dataset" and the option for a bad spec.
DenseTruth load_dense_truth(const std::string& spec);

}  // namespace shardlens

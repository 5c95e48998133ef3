#pragma once
// Dataset spec strings, as the CLI and scenario files write them:
//   synthetic:classes=10,per-class=50 | synthetic:counts=3,5,7 |
//   synthetic:classes=10,n=1000,zipf=1.2 | fashion-mnist:test | fashion-mnist:train |
//   idx:PATH | npy:PATH | csv:PATH; every kind takes ",names=PATH" (class names),
//   ",hierarchy=PATH" (a parent per class: core/io/class_hierarchy.h) and ",first=N" or
//   ",indices=FILE.npy" (a subset, indexed from 0 like a torch Subset).
// Datasets whose samples count many cells (voc2012:val, cityscapes:val, ade20k:val, seg:,
// conll2003:test, tokens:, coco-multilabel:val, multilabel:) are drawn in
// core/dataset/dense_synthetic.h.
// The one reading of a spec's options (`spec_int`, `spec_double`, `spec_allow_only`) serves
// the predictor specs of core/sim/specs.h too.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset/labels.h"
#include "core/vocabulary/progress.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens {

struct Spec {
  std::string kind;                            // text before the first ':'
  std::string path;                            // for file kinds: text after ':' up to options
  std::map<std::string, std::string> options;  // key=value pairs
};

// Parses "kind:key=value,key=value" or "kind:PATH[,key=value...]". `flag` names the flag in
// errors ("--dataset").
Spec parse_spec(const std::string& text, const std::string& flag);

// Option `key` of `spec` as an integer in [lo, hi] / as a number; InputError naming `flag`.
int64_t spec_int(const Spec& spec, const std::string& key, const std::string& flag, int64_t lo,
                 int64_t hi);
double spec_double(const Spec& spec, const std::string& key, const std::string& flag);
// InputError naming `flag` for any option of `spec` not in `keys`.
void spec_allow_only(const Spec& spec, const std::vector<std::string>& keys,
                     const std::string& flag);

// The files a dataset or predictor spec reads: the PATH of idx:, npy:, csv: and model: (not
// model:reference), and the names= and indices= files. Empty for a spec that does not parse
// (its reader reports it). What a command must not write over (require_output).
std::vector<std::string> spec_files(const std::string& text);

// The samples and classes a spec declares by itself (synthetic kinds), read without drawing a
// label; nullopt for the kinds read from files, whose size is the file's.
struct DeclaredDataset {
  int64_t samples = 0;
  int32_t classes = 0;
  Task task = Task::Classification;
  int ignore_index = -1;  // the dataset's own (255 of segmentation sets, -100 of token sets)
};
std::optional<DeclaredDataset> declared_dataset(const std::string& spec);

// What a refusal about the dataset of `spec` names: its label file, or "--dataset" (synthetic
// and packaged datasets).
std::string dataset_origin(const std::string& spec);

std::string fashion_mnist_dir();  // /usr/share/datasets/fashion-mnist unless overridden

// The labels of `spec`. A dense dataset (dense_synthetic.h) gives each sample's largest true
// class: what sizes a shard plan and names a sample, not what the sample counts.
Labels load_labels(const std::string& spec, Progress* progress = nullptr);

}  // namespace shardlens

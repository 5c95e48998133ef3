#pragma once
// The inputs of an evaluation when every dataset index's label and prediction are known
// (simulations; imports given the dataset and the predictions): packed as
// key = target * C + prediction so the hot loops gather one 32-bit value per sample. The
// keys are the only per-sample copy: the labels keep names, source and subset indices, not
// a second array of targets (at 10^8 samples that is 400 MB saved).
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dataset/labels.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens {

struct DatasetInputs {
  std::shared_ptr<const Labels> labels;  // without targets: the keys hold them
  std::vector<int32_t> keys;             // target * C + prediction (< 2^30, as C <= 2^15)
  std::vector<int64_t> class_counts;     // true count of each class (pixels, tokens, ...)
  int32_t num_classes = 0;
  // A task whose samples count many cells (sample_cells.h): row i is what dataset index i
  // counts, and the keys hold each sample's largest true and predicted class (what a record
  // shows). Null for classification: a sample is its key, once.
  Task task = Task::Classification;
  std::shared_ptr<const CellTable> cells;

  int32_t classes() const { return num_classes; }
  int64_t size() const { return static_cast<int64_t>(keys.size()); }
  // The keys as unsigned values, for the hot loops' index arithmetic.
  const uint32_t* unsigned_keys() const { return reinterpret_cast<const uint32_t*>(keys.data()); }
  int32_t target(int64_t index) const { return keys[static_cast<size_t>(index)] / num_classes; }
  int32_t prediction(int64_t index) const { return keys[static_cast<size_t>(index)] % num_classes; }
};

}  // namespace shardlens

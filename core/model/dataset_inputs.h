#pragma once
// The inputs of an evaluation when every dataset index's label and prediction are known
// (simulations; imports given the dataset and the predictions): packed as
// key = target * C + prediction so the hot loops gather one 32-bit value per sample.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/model/labels.h"

namespace shardlens {

struct DatasetInputs {
  std::shared_ptr<const Labels> labels;
  std::vector<uint32_t> keys;
  int32_t classes() const { return labels->num_classes; }
  int64_t size() const { return labels->size(); }
  int32_t prediction(int64_t index) const {
    return static_cast<int32_t>(keys[static_cast<size_t>(index)] % classes());
  }
};

}  // namespace shardlens

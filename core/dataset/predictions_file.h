#pragma once
// Predictions recorded per dataset index in a file (npy:PATH or csv:PATH, one value per
// index), as `--predictor` and `import --predictions` read them.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dataset/dataset_spec.h"
#include "core/dataset/labels.h"

namespace shardlens {

// The predictions of an npy or csv spec, each checked to be a class of `labels`, one per
// dataset index. InputError naming the file and the first bad value otherwise.
std::vector<int32_t> read_predictions_file(const Spec& spec, const Labels& labels);

// Predictions must have one value per dataset index, each in [0, classes).
void validate_predictions(const std::vector<int32_t>& predictions, const Labels& labels,
                          const std::string& origin);

}  // namespace shardlens

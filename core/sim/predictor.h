#pragma once
// Predictors: the predicted class as a function of the dataset index (never of the rank),
// so duplicated samples get the same prediction on every rank.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dataset/labels.h"
#include "core/dataset/predictions_file.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

struct NoisyParams {
  double accuracy = 0.9;
  uint64_t seed = 1;
  // Confusion structure of wrong predictions: "uniform" (any other class) or "adjacent"
  // (class +-1, as similar classes get confused).
  std::string structure = "uniform";
};

// Deterministic per (seed, index): the same index always gets the same prediction.
int32_t noisy_prediction(const NoisyParams& p, int64_t index, int32_t target, int32_t classes);

// Throws InputError for an accuracy outside [0, 1] or an unknown structure.
void validate_noisy(const NoisyParams& p);

std::vector<int32_t> predict_perfect(const Labels& labels);
std::vector<int32_t> predict_noisy(const Labels& labels, const NoisyParams& p, Progress* progress);

}  // namespace shardlens

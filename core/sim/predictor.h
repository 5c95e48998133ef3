#pragma once
// Predictors: the predicted class as a function of the dataset index (never of the rank),
// so duplicated samples get the same prediction on every rank.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dataset/labels.h"
#include "core/dataset/predictions_file.h"
#include "core/vocabulary/progress.h"
#include "core/vocabulary/sample_cells.h"

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

// The cells of one sample of many counts (core/dataset/dense_synthetic.h), given its true
// cells (t, t) with their counts: a function of (seed, index) and the truth alone, so a
// duplicated image is predicted alike on every rank. Null `noisy`: perfect (the truth).
// Segmentation and tokens: the sample's accuracy is drawn around p (within min(p, 1 - p) / 2),
// each true class's around that; its wrong pixels / tokens go to one or two confused classes
// (uniform: another class the sample shows when it has one, else any other; adjacent: t +- 1).
// Multilabel: a present label is found with probability ~p, an absent one is predicted present
// as often as present ones are missed. Appends the row, keys ascending, to `keys` / `counts`.
void predict_cells(const NoisyParams* noisy, Task task, int64_t index, int32_t classes,
                   std::span<const uint32_t> truth_keys, std::span<const uint32_t> truth_counts,
                   std::vector<uint32_t>& keys, std::vector<uint32_t>& counts);

}  // namespace shardlens

#include "core/sim/predictor.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/vocabulary/huge_pages.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

// SplitMix64: a strong, cheap hash so every (seed, index) pair gets its own draw.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform double in [0, 1) of (seed, index, what): one draw per sample and class.
double unit(const NoisyParams& p, int64_t index, uint64_t what) {
  const uint64_t h = mix(mix(p.seed * 0x100000001B3ull ^ mix(uint64_t(index))) ^ (what + 1));
  return double(h >> 11) * 0x1.0p-53;
}

// `p` moved by up to half its distance to the nearer of 0 and 1, by u in [0, 1).
double around(double p, double u) {
  return std::clamp(p + std::min(p, 1 - p) * (2 * u - 1) * 0.5, 0.0, 1.0);
}

// The class wrong predictions of true class t go to: a class the sample also shows (the
// boundary between them), else any other; `avoid` is not chosen when there is another.
int32_t confused_class(const NoisyParams& p, int64_t index, uint64_t what, int32_t t,
                       int32_t classes, const std::vector<int32_t>& shown, int32_t avoid) {
  const uint64_t h = uint64_t(unit(p, index, what) * 0x1.0p53);
  if (p.structure == "adjacent") {
    const int32_t up = (t + 1) % classes, down = (t + classes - 1) % classes;
    const int32_t first = (h & 1) ? up : down, second = (h & 1) ? down : up;
    return first == avoid ? second : first;
  }
  std::vector<int32_t> others;
  for (int32_t c : shown)
    if (c != t && c != avoid) others.push_back(c);
  if (!others.empty()) return others[h % others.size()];
  for (uint64_t k = 0;; ++k) {  // classes >= 3 here when avoid is a class, else >= 2
    const auto c = int32_t((uint64_t(t) + 1 + (h + k) % uint64_t(classes - 1)) % uint64_t(classes));
    if (c != avoid || classes <= 2) return c;
  }
}

}  // namespace

int32_t noisy_prediction(const NoisyParams& p, int64_t index, int32_t target, int32_t classes) {
  if (classes < 2) return target;
  const uint64_t h = mix(p.seed * 0x100000001B3ull ^ mix(static_cast<uint64_t>(index)));
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
  if (u < p.accuracy) return target;
  const uint64_t h2 = mix(h);
  if (p.structure == "adjacent") {
    const int32_t step = (h2 & 1) ? 1 : classes - 1;
    return (target + step) % classes;
  }
  // Any other class, uniformly.
  const auto offset = static_cast<int32_t>(1 + h2 % static_cast<uint64_t>(classes - 1));
  return (target + offset) % classes;
}

std::vector<int32_t> predict_perfect(const Labels& labels) {
  return labels.targets;
}

void validate_noisy(const NoisyParams& p) {
  if (!(p.accuracy >= 0.0 && p.accuracy <= 1.0)) {
    throw InputError("--predictor: accuracy must be in [0, 1]");
  }
  if (p.structure != "uniform" && p.structure != "adjacent") {
    throw InputError("--predictor: structure '" + p.structure + "' is not uniform or adjacent");
  }
}

std::vector<int32_t> predict_noisy(const Labels& labels, const NoisyParams& p, Progress* progress) {
  validate_noisy(p);
  std::vector<int32_t> out;
  assign_huge(out, labels.targets.size(), 0);
  const int64_t n = labels.size();
  constexpr int64_t kChunk = 1 << 20;
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    step(progress, "predicting", static_cast<double>(begin) / static_cast<double>(n));
    const int64_t end = std::min(n, begin + kChunk);
    for (int64_t i = begin; i < end; ++i) {
      out[i] = noisy_prediction(p, i, labels.targets[i], labels.num_classes);
    }
  }
  return out;
}

void predict_cells(const NoisyParams* noisy, Task task, int64_t index, int32_t classes,
                   std::span<const uint32_t> truth_keys, std::span<const uint32_t> truth_counts,
                   std::vector<uint32_t>& keys, std::vector<uint32_t>& counts) {
  const auto c = uint32_t(classes);
  if (!noisy || classes < 2) {
    keys.insert(keys.end(), truth_keys.begin(), truth_keys.end());
    counts.insert(counts.end(), truth_counts.begin(), truth_counts.end());
    return;
  }
  const NoisyParams& p = *noisy;
  const double sample_accuracy = around(p.accuracy, unit(p, index, 0));
  if (task == Task::Multilabel) {
    // Class 2l + t: label l is t. Absent labels turn present as often as present ones vanish.
    int64_t present = 0;
    for (uint32_t key : truth_keys) present += (key / c) % 2;
    const int64_t absent = int64_t(truth_keys.size()) - present;
    const double false_positive =
        absent > 0 ? (1 - sample_accuracy) * double(present) / double(absent) : 0.0;
    for (size_t k = 0; k < truth_keys.size(); ++k) {
      const uint32_t t = truth_keys[k] / c;
      const bool is_present = t % 2 == 1;
      const double u = unit(p, index, 1 + t);
      const bool predicted = is_present ? u < sample_accuracy : u < false_positive;
      keys.push_back(t * c + (t - t % 2 + (predicted ? 1 : 0)));
      counts.push_back(truth_counts[k]);
    }
    return;
  }
  std::vector<int32_t> shown;
  for (uint32_t key : truth_keys) shown.push_back(int32_t(key / c));
  for (size_t k = 0; k < truth_keys.size(); ++k) {
    const auto t = int32_t(truth_keys[k] / c);
    const uint32_t n = truth_counts[k];
    const double accuracy = around(sample_accuracy, unit(p, index, 1 + 5 * uint64_t(t)));
    const auto right = uint32_t(std::llround(double(n) * accuracy));
    const uint32_t wrong = n - right;
    // (prediction, count): the right ones and one or two confused classes, ascending.
    std::array<std::pair<int32_t, uint32_t>, 3> row{};
    size_t used = 0;
    if (right > 0) row[used++] = {t, right};
    if (wrong > 0) {
      const int32_t first = confused_class(p, index, 2 + 5 * uint64_t(t), t, classes, shown, -1);
      const bool two = wrong >= 2 && classes >= 3 && unit(p, index, 3 + 5 * uint64_t(t)) < 0.5;
      const uint32_t second_count = two ? wrong / 3 : 0;
      row[used++] = {first, wrong - second_count};
      if (second_count > 0)
        row[used++] = {confused_class(p, index, 4 + 5 * uint64_t(t), t, classes, shown, first),
                       second_count};
    }
    std::sort(row.begin(), row.begin() + long(used));
    for (size_t j = 0; j < used; ++j) {
      keys.push_back(uint32_t(t) * c + uint32_t(row[j].first));
      counts.push_back(row[j].second);
    }
  }
}

}  // namespace shardlens

#include "core/sim/predictor.h"

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

}  // namespace shardlens

#pragma once
// What the shard strip and the per-rank chart show, reduced in the worker thread to a fixed
// number of buckets over the dataset so painting costs the same at 1,000 or 100,000,000
// samples.
#include <cstdint>
#include <vector>

#include "core/evaluation/evaluation.h"

namespace shardlens {

struct RankTotals {
  int64_t real = 0;          // real samples evaluated in the epoch
  int64_t padding = 0;       // padding duplicates evaluated in the epoch
  int64_t sanity = 0;        // sanity-check records counted as well (leak)
  int64_t notEvaluated = 0;  // given by the sampler but cut by drop_last or the batch limit
};

struct ShardSummary {
  int64_t n = 0;
  int world = 0;
  int buckets = 0;  // min(n, kMaxBuckets); bucket b covers indices [b*n/buckets, (b+1)*n/buckets)
  double bucketScale = 0;  // buckets / n
  // Per rank and bucket: real and padding evaluations.
  std::vector<std::vector<uint32_t>> real, padding;
  std::vector<uint32_t> never;       // indices never evaluated
  std::vector<uint32_t> duplicated;  // indices evaluated more than once
  std::vector<RankTotals> ranks;
  int64_t neverTotal = 0, duplicatedTotal = 0;

  static constexpr int kMaxBuckets = 2048;
  // floor(index * buckets / n), exactly, with a multiply for the hot loops instead of a
  // 64-bit division per sample: the floating estimate is off by at most one, and the
  // integer products correct it.
  int bucketOf(int64_t index) const {
    const int64_t x = index * buckets;
    const double scale = bucketScale > 0 ? bucketScale : double(buckets) / double(n);
    auto b = static_cast<int64_t>(static_cast<double>(index) * scale);
    if (b * n > x)
      --b;
    else if ((b + 1) * n <= x)
      ++b;
    return int(b);
  }
  int64_t bucketStart(int b) const { return int64_t(b) * n / buckets; }
  int64_t bucketSize(int b) const { return bucketStart(b + 1) - bucketStart(b); }
};

// From the evaluation's records, simulated or stored alike. Samples the sampler gave but the
// loader cut are known only from a shard plan: without one (run files) notEvaluated stays 0.
ShardSummary summarizeShards(const Evaluation& e, Progress* progress = nullptr);

}  // namespace shardlens

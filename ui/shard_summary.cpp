#include "ui/shard_summary.h"

#include <algorithm>

namespace shardlens::ui {

ShardSummary summarizeShards(const Evaluation& e, Progress* progress) {
  ShardSummary s;
  s.n = e.plan.n;
  s.world = e.plan.world_size;
  s.buckets = int(std::min<int64_t>(s.n, ShardSummary::kMaxBuckets));
  if (s.n <= 0) return s;
  const size_t b = size_t(s.buckets);
  s.real.assign(size_t(s.world), std::vector<uint32_t>(b, 0));
  s.padding.assign(size_t(s.world), std::vector<uint32_t>(b, 0));
  s.ranks.assign(size_t(s.world), {});
  for (int r = 0; r < s.world && r < int(e.plan.evaluated.size()); ++r) {
    step(progress, "shard strip", double(r) / s.world);
    auto& real = s.real[size_t(r)];
    auto& pad = s.padding[size_t(r)];
    RankTotals& t = s.ranks[size_t(r)];
    const EvaluatedRank& er = e.plan.evaluated[size_t(r)];
    for_each_element(er.sequence, [&](int64_t index, uint8_t flags) {
      const size_t bucket = size_t(s.bucketOf(index));
      if (flags & kPadding)
        ++pad[bucket];
      else
        ++real[bucket];
      // Totals keep the three kinds apart so the chart stacks them: a leaked sanity record
      // is counted as such, whether real or padding.
      if (flags & kSanity)
        ++t.sanity;
      else if (flags & kPadding)
        ++t.padding;
      else
        ++t.real;
    });
    const int64_t evaluatedFromSampler = er.sequence.size() - t.sanity;
    t.notEvaluated = std::max<int64_t>(0, er.sampler_size - evaluatedFromSampler);
  }
  s.never.assign(b, 0);
  s.duplicated.assign(b, 0);
  for (int64_t i = 0; i < s.n && size_t(i) < e.times_evaluated.size(); ++i) {
    const uint8_t times = e.times_evaluated[size_t(i)];
    const size_t bucket = size_t(s.bucketOf(i));
    if (times == 0) {
      ++s.never[bucket];
      ++s.neverTotal;
    } else if (times > 1) {
      ++s.duplicated[bucket];
      ++s.duplicatedTotal;
    }
  }
  return s;
}

}  // namespace shardlens::ui

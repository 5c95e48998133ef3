#include "core/report/shard_summary.h"

#include <algorithm>

namespace shardlens {
namespace {

ShardSummary emptySummary(int64_t n, int world) {
  ShardSummary s;
  s.n = n;
  s.world = world;
  s.buckets = int(std::min<int64_t>(s.n, ShardSummary::kMaxBuckets));
  if (s.n <= 0) return s;
  s.bucketScale = double(s.buckets) / double(s.n);
  const size_t b = size_t(s.buckets);
  s.real.assign(size_t(s.world), std::vector<uint32_t>(b, 0));
  s.padding.assign(size_t(s.world), std::vector<uint32_t>(b, 0));
  s.ranks.assign(size_t(s.world), {});
  return s;
}

// Counts one evaluation of `index` by a rank into its bucket and the rank's totals.
void count(ShardSummary& s, int rank, int64_t index, uint8_t flags) {
  const size_t bucket = size_t(s.bucketOf(index));
  if (flags & kPadding)
    ++s.padding[size_t(rank)][bucket];
  else
    ++s.real[size_t(rank)][bucket];
  // Totals keep the three kinds apart so the chart stacks them: a leaked sanity record
  // is counted as such, whether real or padding.
  RankTotals& t = s.ranks[size_t(rank)];
  if (flags & kSanity)
    ++t.sanity;
  else if (flags & kPadding)
    ++t.padding;
  else
    ++t.real;
}

void addCoverage(ShardSummary& s, const Coverage& times) {
  s.never.assign(size_t(s.buckets), 0);
  s.duplicated.assign(size_t(s.buckets), 0);
  for (int64_t i = 0; i < s.n && size_t(i) < times.size(); ++i) {
    const uint8_t t = times[size_t(i)];
    const size_t bucket = size_t(s.bucketOf(i));
    if (t == 0) {
      ++s.never[bucket];
      ++s.neverTotal;
    } else if (t > 1) {
      ++s.duplicated[bucket];
      ++s.duplicatedTotal;
    }
  }
}

}  // namespace

ShardSummary summarizeShards(const Evaluation& e, Progress* progress) {
  const RecordSource& records = *e.records;
  ShardSummary s = emptySummary(e.meta.dataset_size, records.world_size());
  if (s.n <= 0) return s;
  for (int r = 0; r < s.world; ++r) {
    step(progress, "shard strip", double(r) / s.world);
    if (e.plan && r < int(e.plan->evaluated.size())) {
      // A simulation's records are its plan's elements: walking the plan reads only the
      // order (no label or prediction is needed here), in the strided sequence it lies in.
      for_each_element(e.plan->evaluated[size_t(r)].sequence, [&](int64_t index, uint8_t flags) {
        if (index < s.n) count(s, r, index, flags);
      });
    } else {
      for_each_record(records, r, [&](const Record& rec) {
        if (rec.index >= 0 && rec.index < s.n) count(s, r, rec.index, rec.flags);
      });
    }
    if (e.plan && r < int(e.plan->evaluated.size())) {
      RankTotals& t = s.ranks[size_t(r)];
      const EvaluatedRank& er = e.plan->evaluated[size_t(r)];
      const int64_t evaluatedFromSampler = er.sequence.size() - t.sanity;
      t.notEvaluated = std::max<int64_t>(0, er.sampler_size - evaluatedFromSampler);
    }
  }
  addCoverage(s, e.times_evaluated);
  return s;
}

}  // namespace shardlens

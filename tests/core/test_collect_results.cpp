// mmengine's collect_results(results, size) as a sync strategy: the ranks' results taken in
// turn (zip_longest: result k of rank 0, 1, ..., W-1; a rank that ran out skipped) and cut
// to `size`. The expected records below are that rule applied by hand.
#include <gtest/gtest.h>

#include <vector>

#include "core/sim/engine.h"
#include "core/torchsem/sync.h"

using namespace shardlens;

namespace {

std::vector<int64_t> indices(const std::vector<Record>& records) {
  std::vector<int64_t> out;
  for (const Record& r : records) out.push_back(r.index);
  return out;
}

// Ranks as a padded DistributedSampler leaves them for n = 5, W = 2: rank 1's last record
// is the padding copy of sample 0.
StoredRecords padded_five() {
  StoredRecords s;
  s.ranks = {{{0, 0, 0, 0}, {2, 0, 0, 0}, {4, 0, 0, 0}},
             {{1, 0, 0, 0}, {3, 0, 0, 0}, {0, 0, 0, kPadding}}};
  return s;
}

Scenario scenario(SyncStrategy sync) {
  Scenario s;
  s.dataset = "synthetic:classes=10,per-class=51";  // 510 samples
  s.predictor = "noisy:accuracy=0.8,seed=3";
  s.sampler.kind = SamplerKind::MmengineDefault;
  s.sampler.world_size = 4;  // 128 a rank, 2 padding copies
  s.loader.batch_size = 10;
  s.sync = sync;
  return s;
}

}  // namespace

TEST(CollectResults, InterleavesTheRanksAndCutsThePadding) {
  EXPECT_EQ(indices(collect_results_records(padded_five(), 5)),
            (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(CollectResults, SkipsARankThatRanOutAndCutsOnlyPastSize) {
  StoredRecords s;
  s.ranks = {{{0, 0, 0, 0}, {3, 0, 0, 0}, {6, 0, 0, 0}}, {{1, 0, 0, 0}}, {{2, 0, 0, 0}}};
  EXPECT_EQ(indices(collect_results_records(s, 10)), (std::vector<int64_t>{0, 1, 2, 3, 6}));
  EXPECT_EQ(indices(collect_results_records(s, 4)), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(CollectResults, ABatchIsOneResultSoTheCutKeepsThePadding) {
  // Batches of 2: rank 0 [0, 2] [4], rank 1 [1, 3] [0 (padding)]: 4 results, size 5.
  EXPECT_EQ(indices(collect_results_records(padded_five(), 5, 2)),
            (std::vector<int64_t>{0, 2, 1, 3, 4, 0}));
}

TEST(CollectResults, IsExactUnderMmenginesPaddedSampler) {
  const Evaluation e = simulate(scenario(SyncStrategy::CollectResults));
  EXPECT_EQ(e.synced, e.expected);
  EXPECT_TRUE(e.diagnosis.correct);
}

TEST(CollectResults, ABatchLimitLeavesSamplesOutTheCutCannotBringBack) {
  Scenario s = scenario(SyncStrategy::CollectResults);
  s.loader.limit = BatchLimit::parse("3");  // 3 x 10 x 4 = 120 of 510
  const Evaluation e = simulate(s);
  EXPECT_EQ(e.synced->total(), 120);
  EXPECT_FALSE(e.diagnosis.correct);
}

TEST(CollectResults, PerBatchResultsKeepThePaddingCopies) {
  const Evaluation e = simulate(scenario(SyncStrategy::CollectBatchResults));
  EXPECT_EQ(e.synced->total(), 512);  // 52 results of at most 10: nothing cut
  EXPECT_FALSE(e.diagnosis.correct);
}

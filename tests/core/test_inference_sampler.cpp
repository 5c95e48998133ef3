// detectron2's InferenceSampler and mmengine's DefaultSampler as sampler kinds.
//
// detectron2 is not on PyPI, so its sampler is checked against its source
// (detectron2/data/samplers/distributed_sampler.py, InferenceSampler._get_local_indices):
//   shard_size = total_size // world_size; left = total_size % world_size
//   shard_sizes = [shard_size + int(r < left) for r in range(world_size)]
//   rank r: range(sum(shard_sizes[:r]), min(sum(shard_sizes[:r + 1]), total_size))
// The shard sizes below are that formula worked by hand. mmengine's DefaultSampler is
// checked against mmengine running in tests/frameworks/mmengine_collect.py.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/sim/engine.h"
#include "core/torchsem/sampler.h"

using namespace shardlens;

namespace {

std::vector<RankSequence> inference(int64_t n, int w) {
  SamplerConfig c;
  c.kind = SamplerKind::Detectron2Inference;
  c.world_size = w;
  return sample(n, c);
}

std::vector<int64_t> sizes_of(const std::vector<RankSequence>& ranks) {
  std::vector<int64_t> out;
  for (const RankSequence& r : ranks) out.push_back(r.size());
  return out;
}

}  // namespace

TEST(InferenceSampler, ShardSizesFollowDetectron2sFormula) {
  // 10 // 4 = 2, 10 % 4 = 2: ranks 0 and 1 hold 3.
  EXPECT_EQ(sizes_of(inference(10, 4)), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(sizes_of(inference(8, 4)), (std::vector<int64_t>{2, 2, 2, 2}));
  // Fewer samples than ranks: the last rank's shard is empty.
  EXPECT_EQ(sizes_of(inference(3, 4)), (std::vector<int64_t>{1, 1, 1, 0}));
  // VOC 2012 val on 8 ranks: 1449 // 8 = 181, 1449 % 8 = 1.
  EXPECT_EQ(sizes_of(inference(1449, 8)),
            (std::vector<int64_t>{182, 181, 181, 181, 181, 181, 181, 181}));
  // Cityscapes val on 8 ranks: 500 // 8 = 62, 500 % 8 = 4.
  EXPECT_EQ(sizes_of(inference(500, 8)), (std::vector<int64_t>{63, 63, 63, 63, 62, 62, 62, 62}));
  // ADE20K val on 3 ranks: 2000 // 3 = 666, 2000 % 3 = 2.
  EXPECT_EQ(sizes_of(inference(2000, 3)), (std::vector<int64_t>{667, 667, 666}));
}

TEST(InferenceSampler, ShardsAreContiguousAndCoverTheDatasetOnce) {
  const auto ranks = inference(10, 4);
  EXPECT_EQ(ranks[0].indices(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(ranks[1].indices(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(ranks[2].indices(), (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(ranks[3].indices(), (std::vector<int64_t>{8, 9}));
  for (const RankSequence& r : inference(1449, 8))
    for (uint8_t f : r.flags()) EXPECT_EQ(f, 0);  // never padded
  for (int64_t n : {1, 7, 64, 1449}) {
    for (int w : {1, 2, 3, 8}) {
      std::vector<int64_t> all;
      for (const RankSequence& r : inference(n, w)) {
        const auto idx = r.indices();
        all.insert(all.end(), idx.begin(), idx.end());
      }
      std::vector<int64_t> want(static_cast<size_t>(n));
      std::iota(want.begin(), want.end(), 0);
      EXPECT_EQ(all, want) << "n=" << n << " W=" << w;
    }
  }
}

TEST(InferenceSampler, ShardBoundsAreTheFormulasPrefixSums) {
  EXPECT_EQ(inference_shard(10, 4, 0).begin, 0);
  EXPECT_EQ(inference_shard(10, 4, 2).begin, 6);
  EXPECT_EQ(inference_shard(10, 4, 3).begin, 8);
  EXPECT_EQ(inference_shard(500, 8, 5).begin, 4 * 63 + 62);
  EXPECT_EQ(inference_shard(500, 8, 5).size, 62);
}

TEST(InferenceSampler, ItsUnpaddedShardsSumToTheExactMatrix) {
  Scenario s;
  s.dataset = "synthetic:classes=10,per-class=51";
  s.predictor = "noisy:accuracy=0.8,seed=3";
  s.sampler.kind = SamplerKind::Detectron2Inference;
  s.sampler.world_size = 4;
  s.loader.batch_size = 1;  // build_detection_test_loader's batch size
  const Evaluation e = simulate(s);
  EXPECT_EQ(e.synced, e.expected);
  EXPECT_TRUE(e.diagnosis.correct);
}

// SemSegEvaluator all-gathers each rank's pixel matrix and sums them: an all-reduce, exact
// over the unpadded shards (ignored pixels are its extra class K, left out of the metrics).
TEST(InferenceSampler, SemSegEvaluatorsSummedPixelMatricesAreExact) {
  Scenario s;
  s.dataset = "seg:n=37,classes=4,size=8x8";
  s.predictor = "noisy:accuracy=0.7,seed=1";
  s.sampler.kind = SamplerKind::Detectron2Inference;
  s.sampler.world_size = 4;
  s.loader.batch_size = 1;
  s.sync = SyncStrategy::AllReduce;
  const Evaluation e = simulate(s);
  EXPECT_EQ(e.synced, e.expected);
  EXPECT_TRUE(e.diagnosis.correct);
  EXPECT_EQ(e.meta.task, Task::Segmentation);
}

// DefaultSampler(round_up=True) is DistributedSampler(drop_last=False), padding included;
// round_up=False keeps the rank::W shards and drops the padding.
TEST(MmengineDefaultSampler, RoundUpIsDistributedSamplersPaddingAndOffLeavesItOut) {
  for (bool shuffle : {false, true}) {
    SamplerConfig d;
    d.world_size = 4;
    d.shuffle = shuffle;
    d.seed = 7;
    d.epoch = 1;
    SamplerConfig m = d;
    m.kind = SamplerKind::MmengineDefault;
    const auto want = sample(37, d);
    const auto got = sample(37, m);
    m.round_up = false;
    const auto unpadded = sample(37, m);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(got[r].indices(), want[r].indices());
      EXPECT_EQ(got[r].flags(), want[r].flags());
      auto head = want[r].indices();
      head.resize(r == 0 ? 10 : 9);  // ceil((37 - r) / 4)
      EXPECT_EQ(unpadded[r].indices(), head);
    }
  }
}

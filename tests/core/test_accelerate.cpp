// Accelerate's BatchSamplerShard and gather_for_metrics against vectors made by running
// Accelerate's own code (tests/data/reference/accelerate_vectors.json, every case), and the
// simulation's sync semantics and diagnoses on its layout.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/diagnosis/diagnosis.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/torchsem/accelerate_sampler.h"
#include "core/torchsem/loader.h"
#include "core/torchsem/randperm.h"
#include "core/torchsem/sync.h"
#include "core/vocabulary/types.h"
#include "tests/common/test_rows.h"

using namespace shardlens;

namespace {

// Read once, when the rows are made (before main); unreadable or not JSON gives no cases,
// which ReferenceVectorsCoverTheGrid reports.
const nlohmann::json& reference_vectors() {
  static const nlohmann::json vectors = [] {
    std::ifstream in(SHARDLENS_TEST_DATA_DIR "/reference/accelerate_vectors.json");
    nlohmann::json parsed = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? nlohmann::json{{"cases", nlohmann::json::array()}} : parsed;
  }();
  return vectors;
}

std::vector<std::vector<int64_t>> batches_of(const std::vector<int64_t>& indices, int64_t b) {
  std::vector<std::vector<int64_t>> out;
  for (size_t i = 0; i < indices.size(); i += size_t(b)) {
    out.emplace_back(indices.begin() + std::ptrdiff_t(i),
                     indices.begin() + std::ptrdiff_t(std::min(indices.size(), i + size_t(b))));
  }
  return out;
}

Scenario accelerate_scenario(int64_t n, int w, int64_t b) {
  Scenario s;
  s.dataset = "synthetic:counts=" + std::to_string(n / 2) + "," + std::to_string(n - n / 2);
  s.predictor = "noisy:accuracy=0.8,seed=3";
  s.sampler.kind = SamplerKind::Accelerate;
  s.sampler.world_size = w;
  s.loader.batch_size = b;
  return s;
}

bool has_pattern(const Evaluation& e, Pattern p) {
  for (const Finding& f : e.diagnosis.findings)
    if (f.pattern == p) return true;
  return false;
}

// One row per multi-process case of the vectors, named by its settings. The vectors also ran
// BatchSamplerShard(num_processes=1) itself, which cycles a short last batch; prepare() never
// builds it for one process (data_loader.py: no change without several processes), so
// ShardLens keeps the loader's own batches there: checked by OneProcessKeepsTheLoadersBatches
// and against the real prepare() by tests/frameworks/accelerate_sampler_grid.py.
struct ReferenceCase {
  std::string name;
  nlohmann::json vector;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const ReferenceCase& row, std::ostream* os) {
  *os << row.name;
}

std::vector<ReferenceCase> multi_process_reference_cases() {
  std::vector<ReferenceCase> rows;
  for (const auto& v : reference_vectors()["cases"]) {
    if (v["world_size"].get<int>() == 1) continue;
    auto flag = [&](const char* key, const char* word) {
      return v[key].get<bool>() ? std::string("_") + word : std::string();
    };
    rows.push_back({"n" + v["n"].dump() + "_world" + v["world_size"].dump() + "_batch" +
                        v["batch_size"].dump() + flag("split_batches", "split") +
                        flag("even_batches", "even") + flag("drop_last", "droplast") +
                        (v["shuffle"].get<bool>() ? "_shuffle_seed" + v["seed"].dump() : "") +
                        "_epoch" + v["epoch"].dump(),
                    v});
  }
  return shardlens::test::with_unique_names(std::move(rows));
}

class AccelerateReference : public ::testing::TestWithParam<ReferenceCase> {};

}  // namespace

TEST_P(AccelerateReference, BatchesAndGatherForMetricsEqualAccelerates) {
  const nlohmann::json& v = GetParam().vector;
  SamplerConfig sampler;
  sampler.kind = SamplerKind::Accelerate;
  sampler.world_size = v["world_size"].get<int>();
  sampler.split_batches = v["split_batches"].get<bool>();
  sampler.even_batches = v["even_batches"].get<bool>();
  sampler.shuffle = v["shuffle"].get<bool>();
  // The vectors' shuffled cases came from SeedableRandomSampler (use_seedable_sampler=True).
  sampler.accelerate_shuffle = AccelerateShuffle::Seedable;
  sampler.seed = v["seed"].get<int64_t>();
  sampler.epoch = v["epoch"].get<int64_t>();
  LoaderConfig loader;
  loader.batch_size = v["batch_size"].get<int64_t>();
  loader.drop_last = v["drop_last"].get<bool>();
  const int64_t n = v["n"].get<int64_t>();
  const ShardPlan plan = plan_shards(n, sampler, loader);
  ASSERT_EQ(plan.world_size, sampler.world_size);
  for (int r = 0; r < plan.world_size; ++r) {
    const auto want = v["ranks"][size_t(r)].get<std::vector<std::vector<int64_t>>>();
    EXPECT_EQ(batches_of(plan.sampler[size_t(r)].indices(), plan.batch_size), want) << "rank " << r;
    EXPECT_EQ(plan.evaluated[size_t(r)].batches, int64_t(want.size()));
  }
  // gather_for_metrics: null where a per-step gather would hang or fail.
  EXPECT_EQ(v["gather_for_metrics"].is_null(), !step_layout(plan).even());
  if (v["gather_for_metrics"].is_null()) return;
  StoredRecords records;
  for (int r = 0; r < plan.world_size; ++r) {
    std::vector<Record> rank;
    for (int64_t i : plan.evaluated[size_t(r)].sequence.indices()) rank.push_back({i, 0, 0, 0});
    records.ranks.push_back(rank);
  }
  std::vector<int64_t> kept;
  for (const Record& rec :
       gather_for_metrics_records(records, n, plan.batch_size, plan_exhausted(plan, loader))) {
    kept.push_back(rec.index);
  }
  EXPECT_EQ(kept, v["gather_for_metrics"].get<std::vector<int64_t>>());
}

INSTANTIATE_TEST_SUITE_P(Vectors, AccelerateReference,
                         ::testing::ValuesIn(multi_process_reference_cases()),
                         shardlens::test::NamedRow());

// The rows above are every multi-process case: 66 cases, 5 of one process, over 40 gathered.
TEST(Accelerate, ReferenceVectorsCoverTheGrid) {
  const auto& cases = reference_vectors()["cases"];
  ASSERT_EQ(cases.size(), 66u);
  int with_gather = 0;
  int one_process = 0;
  for (const auto& v : cases) {
    if (v["world_size"].get<int>() == 1)
      ++one_process;
    else if (!v["gather_for_metrics"].is_null())
      ++with_gather;
  }
  EXPECT_GT(with_gather, 40);
  EXPECT_EQ(one_process, 5);
  EXPECT_EQ(multi_process_reference_cases().size(), cases.size() - 5);
}

// One process: the loader's batches as they are, the short last one kept short.
TEST(Accelerate, OneProcessKeepsTheLoadersBatches) {
  SamplerConfig one;
  one.kind = SamplerKind::Accelerate;
  one.world_size = 1;
  LoaderConfig loader;
  loader.batch_size = 3;
  EXPECT_EQ(plan_shards(11, one, loader).sampler[0].indices(),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST(Accelerate, RejectsWhatAccelerateRejects) {
  SamplerConfig s;
  s.kind = SamplerKind::Accelerate;
  s.world_size = 4;
  s.split_batches = true;
  LoaderConfig l;
  l.batch_size = 6;  // not a multiple of 4
  EXPECT_THROW(plan_shards(10, s, l), InputError);
  s.split_batches = false;
  s.rank_seeds = {1, 2, 3, 4};
  EXPECT_THROW(plan_shards(10, s, l), InputError);
}

// Accelerate issue 125's shape: 25 samples on 4 ranks, batches of 2 (total batch 8): the
// loop runs 4 steps and gathers 32 records.
TEST(Accelerate, GatherForMetricsIsExactOnItsOwnLayout) {
  Scenario s = accelerate_scenario(25, 4, 2);
  s.sync = SyncStrategy::GatherForMetrics;
  const Evaluation e = simulate(s);
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.synced->total(), 25);
  EXPECT_TRUE(e.diagnosis.correct);
  EXPECT_EQ(*e.synced, *e.expected);
}

TEST(Accelerate, PlainGatherCountsTheCycledPadding) {
  Scenario s = accelerate_scenario(25, 4, 2);
  s.sync = SyncStrategy::Gather;
  const Evaluation e = simulate(s);
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.synced->total(), 32);  // rounded up to a multiple of B x W = 8
  EXPECT_FALSE(e.diagnosis.correct);
  EXPECT_TRUE(has_pattern(e, Pattern::PlainGatherPadding));
  EXPECT_FALSE(has_pattern(e, Pattern::PaddingDuplicates));
  EXPECT_FALSE(has_pattern(e, Pattern::SanityLeak));  // rank 0 meets sample 0 again: padding
  EXPECT_EQ(e.diagnosis.findings.front().pattern, Pattern::PlainGatherPadding);
  for (const Finding& f : e.diagnosis.findings) {
    if (f.pattern == Pattern::PlainGatherPadding) {
      EXPECT_EQ(f.sample_count, 7);
      EXPECT_EQ(f.samples.front(), 0);  // cycled from the start of the order
    }
  }
}

TEST(Accelerate, SplitBatchesGatherForMetricsTrimsTheLastStep) {
  Scenario s = accelerate_scenario(30, 4, 8);  // slices of 2; 4 steps gather 32
  s.sampler.split_batches = true;
  s.sync = SyncStrategy::GatherForMetrics;
  const Evaluation e = simulate(s);
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.plan->batch_size, 2);
  EXPECT_TRUE(e.diagnosis.correct);
  s.sync = SyncStrategy::Gather;
  EXPECT_EQ(simulate(s).synced->total(), 32);
}

TEST(Accelerate, DistributedSamplerUnderGatherForMetricsIsTheMismatch) {
  // Interleaved padding: the last step's tail is rank 3's real samples 19 and 23.
  Scenario s = accelerate_scenario(25, 4, 4);
  s.sampler.kind = SamplerKind::Distributed;
  s.sync = SyncStrategy::GatherForMetrics;
  const Evaluation e = simulate(s);
  EXPECT_FALSE(e.diagnosis.correct);
  EXPECT_TRUE(has_pattern(e, Pattern::GatherForMetricsMismatch));
}

TEST(Accelerate, UnevenStepsReportNoMatrix) {
  Scenario s = accelerate_scenario(25, 4, 2);  // 13 batches: rank 0 runs 4 steps, others 3
  s.sampler.even_batches = false;
  s.sync = SyncStrategy::GatherForMetrics;
  const Evaluation e = simulate(s);
  EXPECT_FALSE(e.synced);
  EXPECT_FALSE(e.diagnosis.correct);
  ASSERT_EQ(e.diagnosis.findings.size(), 1u);
  EXPECT_EQ(e.diagnosis.findings.front().pattern, Pattern::UnevenSteps);
  EXPECT_NE(e.synced_missing.find("hang"), std::string::npos);
  // torchmetrics' one all-reduce at compute() is reached by every rank: exact.
  s.sync = SyncStrategy::AllReduce;
  const Evaluation once = simulate(s);
  ASSERT_TRUE(once.synced);
  EXPECT_TRUE(once.diagnosis.correct);
}

// From records alone (an imported run, no scenario): 6 flagged copies on 4 ranks cannot be a
// DistributedSampler's padding (fewer than W), so they are Accelerate's cycled padding.
TEST(Accelerate, RecordsAloneNameTheCycledPadding) {
  // Accelerate's own shards for n = 10, W = 4, B = 2 (the first reference vector).
  const std::vector<std::vector<int64_t>> positions = {
      {0, 1, 8, 9}, {2, 3, 10, 11}, {4, 5, 12, 13}, {6, 7, 14, 15}};
  StoredRecords records;
  std::vector<Matrix> per_rank;
  Matrix reported(2), expected(2);
  for (int64_t i = 0; i < 10; ++i) expected.at(int32_t(i % 2), int32_t(i % 2)) += 1;
  for (const auto& rank : positions) {
    std::vector<Record> rows;
    Matrix m(2);
    for (int64_t p : rank) {
      const int64_t index = p % 10;
      const auto t = int32_t(index % 2);
      rows.push_back({index, t, t, uint8_t(p >= 10 ? kPadding : 0)});
      m.at(t, t) += 1;
    }
    records.ranks.push_back(rows);
    per_rank.push_back(m);
    reported += m;
  }
  DiagnosisInput in;
  in.records = &records;
  in.per_rank = &per_rank;
  in.reported = &reported;
  in.expected = &expected;
  in.dataset_size = 10;
  in.class_counts = {5, 5};
  in.batch_size = 2;
  const Diagnosis d = diagnose(in);
  EXPECT_FALSE(d.correct);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().pattern, Pattern::PlainGatherPadding);
  EXPECT_EQ(d.findings.front().sample_count, 6);
  for (const Finding& f : d.findings) EXPECT_NE(f.pattern, Pattern::SanityLeak);
}

// The lessons' own claims: Accelerate issue 125's 25,000 -> 25,600, fixed by
// gather_for_metrics; uneven steps fixed by even_batches or a torchmetrics all-reduce.
TEST(Accelerate, LessonsAndTheirFixes) {
  Scenario s = load_preset("plain-gather-padding");
  Evaluation e = simulate(s);
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.synced->total(), 25600);
  s.sync = SyncStrategy::GatherForMetrics;
  EXPECT_TRUE(simulate(s).diagnosis.correct);
  s = load_preset("uneven-steps");
  EXPECT_FALSE(simulate(s).synced);
  s.sampler.even_batches = true;
  EXPECT_TRUE(simulate(s).diagnosis.correct);
  s = load_preset("uneven-steps");
  s.sync = SyncStrategy::AllReduce;
  EXPECT_TRUE(simulate(s).diagnosis.correct);
}

// Defect 10: with the loader's drop_last and even_batches off, every dealt batch is a full
// one, also when (n / B) % W == 0 and n % B > 0 (Accelerate 1.15's BatchSamplerShard: 66
// samples, batches of 4, 4 ranks: 16 full batches dealt, all of 4, the 2 left dropped).
TEST(Accelerate, DropLastWithoutEvenBatchesKeepsWholeBatches) {
  SamplerConfig c;
  c.kind = SamplerKind::Accelerate;
  c.world_size = 4;
  c.even_batches = false;
  const AccelerateShards s = accelerate_shards(66, c, 4, true);
  for (const RankSequence& r : s.ranks) EXPECT_EQ(r.size(), 16);
  EXPECT_EQ(s.ranks[3].indices().back(), 63);
}

// The double-sharding mistake, as Accelerate 1.15 ran it in 4 processes
// (tests/frameworks/accelerate_prepare.py): 128 of 510 samples, 126 after gather_for_metrics.
TEST(Accelerate, DoubleShardingLessonNumbers) {
  Scenario s = load_preset("accelerate-double-shard");
  const Evaluation e = simulate(s);
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.synced->total(), 126);
  EXPECT_TRUE(has_pattern(e, Pattern::AccelerateDoubleShard));
  s.sync = SyncStrategy::Gather;
  EXPECT_EQ(simulate(s).synced->total(), 128);
  // Rank 1 keeps batches 1 and 5 of its DistributedSampler shard 1, 5, 9, ...
  SamplerConfig c = s.sampler;
  const AccelerateShards shards = accelerate_shards(510, c, 16, false);
  const auto rank1 = shards.ranks[1].indices();
  ASSERT_EQ(rank1.size(), 32u);
  EXPECT_EQ(rank1.front(), 1 + 16 * 4);
  EXPECT_EQ(rank1[16], 1 + 80 * 4);
  // A dispatched stream is read in order: a shuffle of it is refused, naming the recorder.
  c.accelerate_input = AccelerateInput::IterableDispatch;
  c.shuffle = true;
  EXPECT_THROW(accelerate_shards(510, c, 16, false), InputError);
}

// DataLoaderDispatcher as the HF Trainer ran it (tests/python/test_hf_trainer.py: 103 items,
// 4 processes, batches of 4): six whole rounds of 16, rank r taking items 16 k + 4 r ... + 3;
// the last round's 7 items split 2 a rank, rank 3's second row the stream's first item (the
// one padding copy), which gather_for_metrics cuts: exact.
TEST(Accelerate, DispatchedStreamSplitsItsLastRoundEvenly) {
  Scenario s = accelerate_scenario(103, 4, 4);
  s.sampler.accelerate_input = AccelerateInput::IterableDispatch;
  const AccelerateShards shards = accelerate_shards(103, s.sampler, 4, false);
  const std::vector<std::vector<int64_t>> tails = {{96, 97}, {98, 99}, {100, 101}, {102, 0}};
  for (int r = 0; r < 4; ++r) {
    const auto rows = shards.ranks[size_t(r)].indices();
    ASSERT_EQ(rows.size(), 26u) << r;
    EXPECT_EQ(rows[4], 16 + 4 * r) << r;
    EXPECT_EQ(std::vector<int64_t>(rows.end() - 2, rows.end()), tails[size_t(r)]) << r;
  }
  s.sync = SyncStrategy::GatherForMetrics;
  const Evaluation e = simulate(s);
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.synced->total(), 103);
  EXPECT_TRUE(e.diagnosis.correct);
  EXPECT_EQ(e.diagnosis.duplicated_samples, 1);
}

// Accelerate's default shuffle, vectors from torch 2.15: torch.manual_seed(s), then
// int(torch.empty((), dtype=torch.int64).random_()) seeds the RandomSampler's generator,
// whose iterations are that generator's randperm calls 0, 2, 4, ... (each iteration draws a
// second, empty-sliced randperm).
TEST(Accelerate, GlobalRngShuffleMatchesTorch) {
  EXPECT_EQ(random_int64(0), 900450186894289455);
  EXPECT_EQ(random_int64(1234), 3532910284440527571);
  EXPECT_EQ(random_int64(-7), 1027061218825561981);
  const int64_t seed = random_int64(1234);
  EXPECT_EQ(randperm_nth(10, seed, 0), (std::vector<uint32_t>{5, 2, 1, 3, 7, 0, 6, 8, 4, 9}));
  EXPECT_EQ(randperm_nth(10, seed, 1), (std::vector<uint32_t>{5, 2, 1, 8, 4, 6, 7, 0, 9, 3}));
  EXPECT_EQ(randperm_nth(10, seed, 2), (std::vector<uint32_t>{0, 6, 8, 3, 5, 4, 1, 2, 7, 9}));
  SamplerConfig c;
  c.kind = SamplerKind::Accelerate;
  c.world_size = 2;
  c.shuffle = true;
  c.seed = 1234;
  c.epoch = 2;
  EXPECT_EQ(accelerate_shards(10, c, 5, false).ranks[1].indices(),
            (std::vector<int64_t>{7, 4, 6, 3, 9}));
  // One process: no generator of its own, each iteration seeds from the global RNG (a real
  // Accelerator(cpu=True), torch.manual_seed(1234), prepare, three passes).
  c.world_size = 1;
  const std::vector<std::vector<int64_t>> passes = {{2, 1, 3, 6, 7, 9, 5, 4, 8, 0},
                                                    {3, 0, 9, 5, 2, 6, 4, 7, 8, 1},
                                                    {5, 0, 1, 4, 8, 6, 3, 9, 2, 7}};
  for (int64_t e = 0; e < 3; ++e) {
    c.epoch = e;
    EXPECT_EQ(accelerate_shards(10, c, 4, false).ranks[0].indices(), passes[size_t(e)]);
  }
  EXPECT_FALSE(accelerate_order_note(c).empty());
  c.accelerate_shuffle = AccelerateShuffle::Seedable;
  EXPECT_TRUE(accelerate_order_note(c).empty());
}

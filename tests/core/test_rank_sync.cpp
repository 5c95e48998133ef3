// The real synchronisation and the per-rank loop of real runs, over collectives among
// threads (tests/core/rank_fakes.h): every sync strategy performed over the wire reports
// what the simulation engine's synchronize() computes from the same per-rank data, and W
// ranks running their loop against one store leave what assembly needs.
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "core/dataset/dataset_images.h"
#include "core/realrun/rank_launcher.h"
#include "core/realrun/rank_loop.h"
#include "core/realrun/rank_sync.h"
#include "core/runfile/run_evaluation.h"
#include "core/torchsem/sync.h"
#include "tests/common/test_rows.h"
#include "tests/core/rank_fakes.h"

using namespace shardlens;
using shardlens::test::MemoryStore;
using shardlens::test::run_ranks;
using shardlens::test::ThreadCollectives;
using shardlens::test::ThreadGroup;

namespace {

constexpr int32_t kClasses = 3;

// Three ranks of uneven length (4, 3, 2 records; dataset of 9 with batch 2), as a sampler
// that does not pad would leave them. (index, target, prediction, flags).
StoredRecords uneven_records() {
  StoredRecords s;
  s.ranks = {
      {{0, 0, 0, 0}, {3, 1, 1, 0}, {6, 2, 1, 0}, {8, 2, 2, 0}},
      {{1, 1, 1, 0}, {4, 0, 2, 0}, {7, 1, 0, 0}},
      {{2, 2, 2, 0}, {5, 0, 0, 0}},
  };
  return s;
}

RankOutput output_of(const std::vector<Record>& records, int ignore_index) {
  RankOutput out;
  out.records = records;
  out.local = Matrix(kClasses);
  for (const Record& r : records)
    if (r.target != ignore_index) out.local.at(r.target, r.prediction) += 1;
  out.batches = (int64_t(records.size()) + 1) / 2;
  return out;
}

struct Synced {
  std::vector<RealSync> per_rank;
  std::vector<std::string> steps;
};

// Every rank of `records` performs the scenario's sync over threads; `locals` overrides the
// matrices accumulated from the records.
Synced sync_over_threads(const Scenario& s, const StoredRecords& records, int64_t dataset_size,
                         bool sums_bfloat16 = true, const std::vector<Matrix>& locals = {}) {
  const int world = records.world_size();
  ThreadGroup group(world);
  Synced out;
  out.per_rank.resize(size_t(world));
  run_ranks(world, [&](int r) {
    ThreadCollectives coll(group, r, sums_bfloat16);
    RankOutput mine = output_of(records.ranks[size_t(r)], s.ignore_index);
    if (!locals.empty()) mine.local = locals[size_t(r)];
    out.per_rank[size_t(r)] = synchronize_for_real(coll, s, mine, world, dataset_size);
  });
  out.steps = group.steps();
  return out;
}

Scenario scenario(SyncStrategy sync, CounterDtype dtype = CounterDtype::Int64) {
  Scenario s;
  s.sync = sync;
  s.dtype = dtype;
  s.loader.batch_size = 2;
  s.sampler.world_size = 3;
  return s;
}

Matrix matrix(std::vector<double> cells) {
  Matrix m(kClasses);
  m.cells = std::move(cells);
  return m;
}

const std::vector<SyncStrategy> kStrategies = {SyncStrategy::AllReduce,
                                               SyncStrategy::Local,
                                               SyncStrategy::Double,
                                               SyncStrategy::GatherZeroPad,
                                               SyncStrategy::GatherTrim,
                                               SyncStrategy::GatherForMetrics,
                                               SyncStrategy::NormalizeThenSum,
                                               SyncStrategy::CollectResults,
                                               SyncStrategy::CollectBatchResults};

const std::vector<CounterDtype> kDtypes = {CounterDtype::Int64, CounterDtype::Float32,
                                           CounterDtype::Float16, CounterDtype::BFloat16};

// Every rank's own matrix, as the engine receives it.
std::vector<Matrix> engine_inputs(const StoredRecords& records, int ignore_index) {
  std::vector<Matrix> per_rank;
  for (const auto& rank : records.ranks) per_rank.push_back(output_of(rank, ignore_index).local);
  return per_rank;
}

// One row per strategy, counter dtype and ignore_index (-1: none; 0: class 0 ignored).
struct WireRow {
  std::string name;
  SyncStrategy strategy;
  CounterDtype dtype;
  int ignore;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const WireRow& row, std::ostream* os) {
  *os << row.name;
}

std::vector<WireRow> wire_rows() {
  std::vector<WireRow> rows;
  for (SyncStrategy strategy : kStrategies)
    for (CounterDtype dtype : kDtypes)
      for (int ignore : {-1, 0})
        rows.push_back({to_string(strategy) + "_" + to_string(dtype) +
                            (ignore < 0 ? "_no_ignore" : "_ignore" + std::to_string(ignore)),
                        strategy, dtype, ignore});
  return shardlens::test::with_unique_names(std::move(rows));
}

class RankSyncOverTheWire : public ::testing::TestWithParam<WireRow> {};

TEST_P(RankSyncOverTheWire, EqualsTheEngine) {
  const auto& [name, strategy, dtype, ignore] = GetParam();
  const StoredRecords records = uneven_records();
  Scenario s = scenario(strategy, dtype);
  s.ignore_index = ignore;
  const Synced got = sync_over_threads(s, records, 9);

  const std::vector<Matrix> per_rank = engine_inputs(records, ignore);
  SyncInputs in;
  in.per_rank = &per_rank;
  in.records = &records;
  in.dataset_size = 9;
  in.batch_size = 2;
  in.ignore_index = ignore;
  in.dtype = dtype;
  const Matrix engine = synchronize(strategy, in);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(got.per_rank[size_t(r)].reported.cells, engine.cells) << "rank " << r;
    EXPECT_EQ(got.per_rank[size_t(r)].note, "") << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, RankSyncOverTheWire, ::testing::ValuesIn(wire_rows()),
                         shardlens::test::NamedRow());

// The same data by hand: 9 records, rank sizes 4, 3, 2.
TEST(RankSync, StrategiesReportWhatTheyShouldByHand) {
  const StoredRecords records = uneven_records();
  const Matrix sum = matrix({2, 0, 1,  //
                             1, 2, 0,  //
                             0, 1, 2});
  const Matrix rank0 = matrix({1, 0, 0, 0, 1, 0, 0, 1, 1});
  auto reported = [&](SyncStrategy strategy, int64_t dataset_size = 9) {
    return sync_over_threads(scenario(strategy), records, dataset_size).per_rank[0].reported.cells;
  };
  EXPECT_EQ(reported(SyncStrategy::AllReduce), sum.cells);
  EXPECT_EQ(reported(SyncStrategy::GatherTrim), sum.cells);
  EXPECT_EQ(reported(SyncStrategy::Local), rank0.cells);
  // The second all_reduce sums the synced matrix every rank already holds: W = 3 times it.
  std::vector<double> tripled = sum.cells;
  for (double& v : tripled) v *= 3;
  EXPECT_EQ(reported(SyncStrategy::Double), tripled);
  // Padded to the longest rank (4): ranks 1 and 2 add 1 and 2 pairs (0, 0).
  std::vector<double> padded = sum.cells;
  padded[0] += 3;
  EXPECT_EQ(reported(SyncStrategy::GatherZeroPad), padded);
  // The last gathered batch holds rank 0's records 6, 8 and rank 1's 7. With 9 samples
  // 9 % (2 * 3) = 3 keeps all three; were the dataset 8, 8 % 6 = 2 would cut record 7, (1, 0).
  EXPECT_EQ(reported(SyncStrategy::GatherForMetrics), sum.cells);
  std::vector<double> cut = sum.cells;
  cut[3] -= 1;
  EXPECT_EQ(reported(SyncStrategy::GatherForMetrics, 8), cut);
}

TEST(RankSync, IssuesTheCollectivesUsersWrite) {
  const StoredRecords records = uneven_records();
  EXPECT_EQ(
      sync_over_threads(scenario(SyncStrategy::AllReduce), records, 9).steps,
      (std::vector<std::string>{"double all_gather of the per-rank matrices", "int64 all_reduce"}));
  EXPECT_EQ(
      sync_over_threads(scenario(SyncStrategy::Double, CounterDtype::Float16), records, 9).steps,
      (std::vector<std::string>{"double all_gather of the per-rank matrices",
                                "double all_reduce as float16",
                                "double second all_reduce as float16"}));
  EXPECT_EQ(sync_over_threads(scenario(SyncStrategy::GatherTrim), records, 9).steps,
            (std::vector<std::string>{"double all_gather of the per-rank matrices",
                                      "int64 all_gather of sizes", "int64 all_gather of records"}));
}

TEST(RankSync, FloatCountersSumInTheirDtypeOnTheWire) {
  // float16 holds integers exactly only up to 2048: 2048 + 1 + 1 summed in float16 in rank
  // order stays 2048, as torch.distributed's all_reduce of a float16 tensor does here.
  StoredRecords three;
  three.ranks.resize(3);
  std::vector<Matrix> locals(3, Matrix(kClasses));
  locals[0].at(0, 0) = 2048;
  locals[1].at(0, 0) = 1;
  locals[2].at(0, 0) = 1;
  const Synced once = sync_over_threads(scenario(SyncStrategy::AllReduce, CounterDtype::Float16),
                                        three, 9, true, locals);
  EXPECT_EQ(once.per_rank[0].reported.at(0, 0), 2048);
  const Synced exact = sync_over_threads(scenario(SyncStrategy::AllReduce), three, 9, true, locals);
  EXPECT_EQ(exact.per_rank[0].reported.at(0, 0), 2050);
}

// One row per strategy that sums floats on the wire.
struct StrategyRow {
  std::string name;
  SyncStrategy strategy;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const StrategyRow& row, std::ostream* os) {
  *os << row.name;
}

class RankSyncWithoutBFloat16 : public ::testing::TestWithParam<StrategyRow> {};

TEST_P(RankSyncWithoutBFloat16, FallsBackToTheEngineWithANote) {
  const SyncStrategy strategy = GetParam().strategy;
  const StoredRecords records = uneven_records();
  const Scenario s = scenario(strategy, CounterDtype::BFloat16);
  const Synced got = sync_over_threads(s, records, 9, /*sums_bfloat16=*/false);
  const std::vector<Matrix> per_rank = engine_inputs(records, -1);
  SyncInputs in;
  in.per_rank = &per_rank;
  in.dtype = CounterDtype::BFloat16;
  EXPECT_EQ(got.per_rank[1].reported.cells, synchronize(strategy, in).cells);
  EXPECT_NE(got.per_rank[0].note.find("cannot all_reduce bfloat16"), std::string::npos)
      << got.per_rank[0].note;
  // The per-rank matrices still crossed the wire; no float all_reduce did.
  EXPECT_EQ(got.steps, std::vector<std::string>{"double all_gather of the per-rank matrices"});
}

INSTANTIATE_TEST_SUITE_P(ABackendWithoutTheDtype, RankSyncWithoutBFloat16,
                         ::testing::Values(StrategyRow{"all_reduce", SyncStrategy::AllReduce},
                                           StrategyRow{"double", SyncStrategy::Double}),
                         shardlens::test::NamedRow());

TEST(RankSync, ACollectiveFailureReachesTheCaller) {
  class Failing : public RankCollectives {
   public:
    std::vector<double> all_gather(const std::vector<double>&, const char* what) override {
      throw RunFailure(std::string(what) + " failed: Connection closed by peer");
    }
    std::vector<int64_t> all_gather(const std::vector<int64_t>&, const char*) override {
      return {};
    }
    void all_reduce_sum(std::vector<double>&, const char*) override {}
    void all_reduce_sum(std::vector<int64_t>&, const char*) override {}
    bool all_reduce_sum(std::vector<double>&, CounterDtype, const char*) override { return true; }
  } failing;
  try {
    synchronize_for_real(failing, scenario(SyncStrategy::AllReduce),
                         output_of(uneven_records().ranks[0], -1), 3, 9);
    FAIL() << "no exception";
  } catch (const RunFailure& e) {
    EXPECT_STREQ(e.what(), "all_gather of the per-rank matrices failed: Connection closed by peer");
  }
}

// --- the per-rank loop ---------------------------------------------------------------------

// Images of one pixel whose value is the class the fake model predicts.
class PixelModel : public BatchClassifier {
 public:
  std::vector<int32_t> predict(const uint8_t* pixels, int64_t count, int32_t rows, int32_t cols,
                               int32_t classes) override {
    EXPECT_EQ(rows * cols, 1);
    std::vector<int32_t> out;
    for (int64_t i = 0; i < count; ++i) out.push_back(int32_t(pixels[i]) % classes);
    ++batches;
    return out;
  }
  int batches = 0;
};

// n labels i % 3, predictions (i * i) % 3.
RunDataset dataset(int64_t n) {
  RunDataset d;
  d.labels.num_classes = kClasses;
  d.images.count = n;
  d.images.rows = 1;
  d.images.cols = 1;
  for (int64_t i = 0; i < n; ++i) {
    d.labels.targets.push_back(int32_t(i % 3));
    d.images.pixels.push_back(uint8_t((i * i) % 3));
  }
  return d;
}

TEST(RankLoop, EvaluatesTheRanksShardInBatches) {
  // DistributedSampler without shuffle: rank 1 of 2 over 7 gets 1, 3, 5 and pads with 0.
  const RunDataset data = dataset(7);
  Scenario s = scenario(SyncStrategy::AllReduce);
  s.loader.batch_size = 3;
  PixelModel model;
  const RankOutput out = evaluate_rank(s, data, 1, 2, model, nullptr, nullptr);
  ASSERT_EQ(out.records.size(), 4u);
  const int64_t indices[] = {1, 3, 5, 0};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out.records[i].index, indices[i]);
    EXPECT_EQ(out.records[i].target, indices[i] % 3);
    EXPECT_EQ(out.records[i].prediction, (indices[i] * indices[i]) % 3);
  }
  EXPECT_EQ(out.records[3].flags, kPadding);
  EXPECT_EQ(out.batches, 2);
  EXPECT_EQ(model.batches, 2);
  // (target, prediction): (1,1) (0,0) (2,1) (0,0).
  EXPECT_EQ(out.local.cells, matrix({2, 0, 0, 0, 1, 0, 0, 1, 0}).cells);
}

TEST(RankLoop, CountersAccumulateInTheirDtypeBatchByBatch) {
  // One rank, 3000 samples of class 0 predicted 0, batches of 1: a float16 counter stalls at
  // 2048; batches of 1000 add 1000 at a time (3000 is a float16 value).
  RunDataset data;
  data.labels.num_classes = 2;
  data.labels.targets.assign(3000, 0);
  data.images = {3000, 1, 1, std::vector<uint8_t>(3000, 0)};
  PixelModel model;
  Scenario s = scenario(SyncStrategy::AllReduce, CounterDtype::Float16);
  s.loader.batch_size = 1;
  EXPECT_EQ(evaluate_rank(s, data, 0, 1, model, nullptr, nullptr).local.at(0, 0), 2048);
  s.loader.batch_size = 1000;
  EXPECT_EQ(evaluate_rank(s, data, 0, 1, model, nullptr, nullptr).local.at(0, 0), 3000);
}

TEST(RankLoop, ABatchCounterCountsInsteadOfTheCpu) {
  class DoublingCounter : public BatchCounter {
   public:
    void count(const std::vector<int32_t>& targets, const std::vector<int32_t>& predictions,
               int32_t ignore_index, std::vector<double>& cells) override {
      for (size_t i = 0; i < targets.size(); ++i)
        if (targets[i] != ignore_index) cells[size_t(targets[i] * 3 + predictions[i])] += 2;
      ++calls;
    }
    int calls = 0;
  } counter;
  PixelModel model;
  Scenario s = scenario(SyncStrategy::AllReduce);
  s.loader.batch_size = 2;
  const RankOutput out = evaluate_rank(s, dataset(6), 0, 1, model, &counter, nullptr);
  EXPECT_EQ(counter.calls, 3);
  // Indices 0..5: (0,0) (1,1) (2,1) (0,0) (1,1) (2,1), each counted twice.
  EXPECT_EQ(out.local.cells, matrix({4, 0, 0, 0, 4, 0, 0, 4, 0}).cells);
}

TEST(RankLoop, RanksPublishWhatAssemblyNeeds) {
  // 2 ranks over 7 samples, through one store and real exchanges between threads.
  const RunDataset data = dataset(7);
  RealRunConfig cfg;
  cfg.scenario = scenario(SyncStrategy::AllReduce);
  cfg.scenario.loader.batch_size = 3;
  cfg.scenario.sampler.world_size = 2;
  MemoryStore base;
  const std::shared_ptr<RankStore> store = base.prefixed(kRunStorePrefix);
  ThreadGroup group(2);
  run_ranks(2, [&](int r) {
    ThreadCollectives coll(group, r);
    PixelModel model;
    run_rank_body(cfg.scenario, data, r, 2, *store, coll, nullptr, model, nullptr);
  });
  const std::vector<std::string> published = base.keys();
  const std::set<std::string> keys(published.begin(), published.end());
  for (const char* k : {"rank0/records", "rank0/matrix", "rank0/done", "rank1/records",
                        "rank1/matrix", "rank1/done", "synced"})
    EXPECT_EQ(keys.count(std::string("shardlens//") + k), 1u) << k;
  EXPECT_EQ(keys.count("shardlens//sync_note"), 0u);

  const RunFile run = assemble_run(*store, cfg, data.labels, 2, {}, "test");
  EXPECT_TRUE(run.meta.complete) << run.meta.incomplete_reason;
  EXPECT_EQ(run.records.rank_size(0), 4);
  EXPECT_EQ(run.records.rank_size(1), 4);
  // The single-process matrix over 0..6: (0,0) (1,1) (2,1) (0,0) (1,1) (2,1) (0,0).
  // Built from the records when the run is opened (complete_evaluation), not stored.
  EXPECT_FALSE(run.expected.has_value());
  const Evaluation opened = evaluation_from_run(run, "assembled");
  ASSERT_TRUE(opened.expected.has_value());
  EXPECT_EQ(opened.expected->cells, matrix({3, 0, 0, 0, 2, 0, 0, 2, 0}).cells);
  // The all-reduce counts index 0 twice (rank 1's padding): one more (0, 0).
  EXPECT_EQ(run.synced.cells, matrix({4, 0, 0, 0, 2, 0, 0, 2, 0}).cells);
  EXPECT_EQ(run.per_rank[1].cells, matrix({2, 0, 0, 0, 1, 0, 0, 1, 0}).cells);
}

TEST(RankLoop, ImagesOfADatasetSpec) {
  EXPECT_EQ(dataset_images_path("idx:/data/noise-labels-idx1-ubyte"),
            "/data/noise-images-idx3-ubyte");
  EXPECT_THROW(dataset_images_path("idx:/data/labels.bin"), InputError);
  EXPECT_THROW(dataset_images_path("synthetic:classes=2,per-class=1"), InputError);
}

}  // namespace

// End-to-end engine invariants, checked against direct counting of the shard plan.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/sim/engine.h"
#include "core/vocabulary/types.h"
#include "tests/common/test_rows.h"

using namespace shardlens;

namespace {

Scenario base(int w = 4, int64_t b = 10) {
  Scenario s;
  s.dataset = "synthetic:classes=10,per-class=51";
  s.predictor = "noisy:accuracy=0.8,seed=3";
  s.sampler.world_size = w;
  s.loader.batch_size = b;
  return s;
}

// The confusion matrix of a rank counted directly from its evaluated indices.
Matrix direct_count(const Evaluation& e, int rank) {
  Matrix m(e.inputs->classes());
  for (int64_t idx : e.plan->evaluated[rank].sequence.indices()) {
    m.at(e.inputs->target(idx), e.inputs->prediction(idx)) += 1;
  }
  return m;
}

}  // namespace

TEST(Engine, CorrectScenarioIsDiagnosedCorrect) {
  Scenario s = base();
  s.dataset = "synthetic:classes=10,per-class=50";  // 500 = 4 * 125, no padding
  const Evaluation e = simulate(s);
  EXPECT_TRUE(e.diagnosis.correct);
  EXPECT_TRUE(e.diagnosis.findings.empty());
  EXPECT_EQ(e.synced, e.expected);
  EXPECT_EQ(e.expected->row_sums(), std::vector<double>(10, 50.0));
}

namespace {

// One row per shuffle and batch limit: 3 ranks, batches of 7, epoch 2.
struct SettingsRow {
  std::string name;
  bool shuffle;
  const char* limit;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const SettingsRow& row, std::ostream* os) {
  *os << row.name;
}

std::vector<SettingsRow> settings_rows() {
  std::vector<SettingsRow> rows;
  for (bool shuffle : {false, true})
    for (const char* limit : {"all", "3", "0.5"})
      rows.push_back(
          {std::string(shuffle ? "shuffled" : "in_order") + "_limit_" + limit, shuffle, limit});
  return shardlens::test::with_unique_names(std::move(rows));
}

class EnginePerRank : public ::testing::TestWithParam<SettingsRow> {};

}  // namespace

TEST_P(EnginePerRank, MatricesEqualDirectCounts) {
  const auto& [name, shuffle, limit] = GetParam();
  Scenario s = base(3, 7);
  s.sampler.shuffle = shuffle;
  s.sampler.epoch = 2;
  s.loader.limit = BatchLimit::parse(limit);
  const Evaluation e = simulate(s);
  Matrix sum(10);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(e.per_rank[r], direct_count(e, r)) << "rank " << r;
    sum += e.per_rank[r];
  }
  EXPECT_EQ(e.synced, sum);
}

INSTANTIATE_TEST_SUITE_P(AcrossSettings, EnginePerRank, ::testing::ValuesIn(settings_rows()),
                         shardlens::test::NamedRow());

TEST(Engine, PaddingAddsTheFirstSamplesOfTheOrder) {
  const Evaluation e = simulate(base());  // 510 samples, 4 ranks: 2 padding duplicates
  EXPECT_EQ(e.synced->total(), 512);
  Matrix want = *e.expected;
  want.at(e.inputs->target(0), e.inputs->prediction(0)) += 1;
  want.at(e.inputs->target(1), e.inputs->prediction(1)) += 1;
  EXPECT_EQ(e.synced, want);
  EXPECT_EQ(e.times_evaluated[0], 2);
  EXPECT_EQ(e.times_evaluated[2], 1);
  EXPECT_EQ(e.expected_distinct, e.expected);
}

TEST(Engine, SyncStrategiesScaleAsDescribed) {
  Scenario s = base();
  const Evaluation all = simulate(s);
  s.sync = SyncStrategy::Double;
  EXPECT_EQ(simulate(s).synced, all.synced->scaled(4));
  s.sync = SyncStrategy::Local;
  EXPECT_EQ(simulate(s).synced, all.per_rank[0]);
  s.sync = SyncStrategy::GatherTrim;
  EXPECT_EQ(simulate(s).synced, all.synced);
  s.sync = SyncStrategy::NormalizeThenSum;
  for (double row : simulate(s).synced->row_sums()) EXPECT_NEAR(row, 4.0, 1e-9);
}

TEST(Engine, GatherZeroPadAddsZeroPairsForShortRanks) {
  Scenario s = base();
  s.sampler.kind = SamplerKind::Unrepeated;  // 128, 128, 127, 127
  const Evaluation trim = simulate(s);
  s.sync = SyncStrategy::GatherZeroPad;
  Matrix want = *trim.synced;
  want.at(0, 0) += 2;
  EXPECT_EQ(simulate(s).synced, want);
}

TEST(Engine, GatherForMetricsTrimsTheLastGatheredBatch) {
  Scenario s = base(4, 16);
  s.sync = SyncStrategy::GatherForMetrics;
  const Evaluation e = simulate(s);
  // 510 % 64 = 62 of the last 64 gathered items kept: rank 3's last two records dropped.
  EXPECT_EQ(e.synced->total(), 510);
  const auto rank3 = e.plan->evaluated[3].sequence.indices();
  Matrix want = e.per_rank[0];
  for (int r = 1; r < 4; ++r) want += e.per_rank[r];
  for (size_t k = rank3.size() - 2; k < rank3.size(); ++k) {
    want.at(e.inputs->target(rank3[k]), e.inputs->prediction(rank3[k])) -= 1;
  }
  EXPECT_EQ(e.synced, want);
  EXPECT_NE(e.synced, e.expected);
}

TEST(Engine, Float16CountersStallPerBatch) {
  Scenario s;
  s.dataset = "synthetic:classes=1,per-class=5000";
  s.predictor = "perfect";
  s.sampler.world_size = 1;
  s.loader.batch_size = 1;
  s.dtype = CounterDtype::Float16;
  EXPECT_EQ(simulate(s).per_rank[0].at(0, 0), 2048);  // +1 at a time stalls at 2048
  // Batches of 3 past 2048 round to the float16 spacing (ties to even), so the count
  // overshoots; the compiler's own float16 arithmetic is the reference.
  s.loader.batch_size = 3;
  _Float16 want = 0;
  for (int added = 0; added < 5000; added += 3) {
    want = static_cast<_Float16>(static_cast<float>(want) +
                                 static_cast<float>(std::min(3, 5000 - added)));
  }
  EXPECT_EQ(simulate(s).per_rank[0].at(0, 0), static_cast<double>(want));
  EXPECT_NE(static_cast<double>(want), 5000.0);
}

TEST(Engine, IgnoreIndexDropsARow) {
  Scenario s = base();
  s.ignore_index = 3;
  const Evaluation e = simulate(s);
  EXPECT_EQ(e.synced->row_sums()[3], 0);
  s.ignore_index = 10;
  EXPECT_THROW(simulate(s), InputError);
}

TEST(Engine, ProgressCanCancel) {
  struct StopAtOnce : Progress {
    bool cancelled() const override { return true; }
  } stop;
  EXPECT_THROW(simulate(base(), &stop), Cancelled);
}

TEST(Engine, SimulatedRecordsMatchThePlan) {
  Scenario s = base(3, 4);
  s.sampler.shuffle = true;
  s.loader.sanity_leak = true;
  const Evaluation e = simulate(s);
  const auto& records = e.records;
  for (int r = 0; r < 3; ++r) {
    const auto indices = e.plan->evaluated[r].sequence.indices();
    const auto flags = e.plan->evaluated[r].sequence.flags();
    ASSERT_EQ(records->rank_size(r), static_cast<int64_t>(indices.size()));
    size_t k = 0;
    for_each_record(*records, r, [&](const Record& rec) {
      EXPECT_EQ(rec.index, indices[k]);
      EXPECT_EQ(rec.flags, flags[k]);
      EXPECT_EQ(rec.target, e.inputs->target(rec.index));
      ++k;
    });
    // Reading from an offset lands on the same records.
    std::vector<Record> tail(3);
    records->read(r, 5, tail);
    EXPECT_EQ(tail[0].index, indices[5]);
  }
}

namespace {

// Records every report; cancels once a stage has reported a fraction past `cancel_after`.
class RecordingProgress : public Progress {
 public:
  explicit RecordingProgress(std::string cancel_stage = "", double cancel_after = 2.0)
      : m_cancel_stage(std::move(cancel_stage)), m_cancel_after(cancel_after) {}
  void report(std::string_view stage, double fraction) override {
    const std::lock_guard<std::mutex> lock(m_mutex);
    reports.emplace_back(std::string(stage), fraction);
    if (stage == m_cancel_stage && fraction > m_cancel_after) m_cancel = true;
  }
  bool cancelled() const override { return m_cancel; }
  std::vector<std::pair<std::string, double>> reports;

 private:
  std::mutex m_mutex;
  std::string m_cancel_stage;
  double m_cancel_after;
  std::atomic<bool> m_cancel{false};
};

Scenario large_scenario() {  // 1 M samples, 1000 classes, 64 ranks
  Scenario s;
  s.dataset = "synthetic:classes=1000,per-class=1000";
  s.predictor = "noisy:accuracy=0.9,seed=1";
  s.sampler.world_size = 64;
  s.sampler.shuffle = true;
  s.loader.batch_size = 64;
  return s;
}

}  // namespace

TEST(Engine, AccumulationProgressMovesBeforeTheEnd) {
  RecordingProgress progress;
  simulate(large_scenario(), &progress);
  int64_t inside = 0;
  double last = 0;
  for (const auto& [stage, fraction] : progress.reports) {
    if (stage != "accumulating") continue;
    EXPECT_GE(fraction, last);  // only the caller's thread reports, so it never goes back
    last = fraction;
    inside += fraction > 0 && fraction < 1;
  }
  EXPECT_GE(inside, 5) << "the accumulation bar jumped from 0 to the end";
  EXPECT_EQ(last, 1.0);
}

namespace {

// Cancelled part-way through: the exception reaches the caller (no std::terminate from a
// worker thread), and a float counter's batch-by-batch path stops the same way. One row per
// counter dtype.
struct DtypeRow {
  std::string name;
  CounterDtype dtype;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const DtypeRow& row, std::ostream* os) {
  *os << row.name;
}

class EngineCancel : public ::testing::TestWithParam<DtypeRow> {};

}  // namespace

TEST_P(EngineCancel, InsideTheAccumulationStopsEveryWorker) {
  Scenario s = large_scenario();
  s.dtype = GetParam().dtype;
  RecordingProgress progress("accumulating", 0.1);
  EXPECT_THROW(simulate(s, &progress), Cancelled);
  double furthest = 0;
  for (const auto& [stage, fraction] : progress.reports) {
    EXPECT_NE(stage, "diagnosing");  // nothing ran after the cancel
    if (stage == "accumulating") furthest = std::max(furthest, fraction);
  }
  EXPECT_LT(furthest, 0.5);
}

INSTANTIATE_TEST_SUITE_P(EveryPath, EngineCancel,
                         ::testing::Values(DtypeRow{"int64", CounterDtype::Int64},
                                           DtypeRow{"float16", CounterDtype::Float16}),
                         shardlens::test::NamedRow());

namespace {

// Keys computed over the targets (perfect and noisy predictors) against the predictions
// made by load_predictions and packed by make_inputs.
struct InPlaceRow {
  std::string name;
  std::string dataset;
  std::string predictor;
};

void PrintTo(const InPlaceRow& row, std::ostream* os) {
  *os << row.name;
}

class InPlaceKeys : public ::testing::TestWithParam<InPlaceRow> {};

}  // namespace

TEST_P(InPlaceKeys, EqualTheKeysOfLoadedPredictions) {
  const InPlaceRow& row = GetParam();
  const Labels labels = load_labels(row.dataset);
  auto shared = std::make_shared<const Labels>(labels);
  const auto packed = make_inputs(shared, load_predictions(row.predictor, *shared));
  const auto predictor = label_predictor(row.predictor);
  ASSERT_TRUE(predictor.has_value());
  const auto in_place = make_inputs_in_place(labels, *predictor);
  EXPECT_EQ(in_place->keys, packed->keys);
  EXPECT_EQ(in_place->class_counts, packed->class_counts);
  EXPECT_EQ(in_place->num_classes, packed->num_classes);
  EXPECT_EQ(in_place->labels->source, packed->labels->source);
  EXPECT_TRUE(in_place->labels->targets.empty());

  // The whole simulation (in place, the plan drawn beside it) against the packed inputs.
  Scenario s = base(3, 7);
  s.dataset = row.dataset;
  s.predictor = row.predictor;
  s.sampler.shuffle = true;
  const Evaluation got = simulate(s);
  const Evaluation want = evaluate(s, packed);
  EXPECT_EQ(got.per_rank, want.per_rank);
  EXPECT_EQ(got.synced, want.synced);
  EXPECT_EQ(got.expected, want.expected);
  EXPECT_EQ(got.times_evaluated, want.times_evaluated);
  EXPECT_EQ(got.diagnosis.correct, want.diagnosis.correct);
}

INSTANTIATE_TEST_SUITE_P(
    Predictors, InPlaceKeys,
    ::testing::Values(InPlaceRow{"perfect", "synthetic:classes=10,per-class=51", "perfect"},
                      InPlaceRow{"noisy", "synthetic:classes=10,per-class=51",
                                 "noisy:accuracy=0.8,seed=3"},
                      InPlaceRow{"adjacent", "synthetic:classes=7,n=999,zipf=1.1",
                                 "noisy:accuracy=0.5,seed=9,structure=adjacent"},
                      InPlaceRow{"never_right", "synthetic:classes=1000,n=20000,zipf=1.1",
                                 "noisy:accuracy=0,seed=2"}),
    shardlens::test::NamedRow());

TEST(Engine, FilePredictorsAreNotComputedInPlace) {
  EXPECT_FALSE(label_predictor("npy:/nonexistent.npy").has_value());
  EXPECT_THROW(label_predictor("noisy:accuracy=2"), InputError);
}

// A cancel while the inputs load also stops the permutation drawn beside them.
TEST(Engine, CancelDuringTheLoadStopsThePlanner) {
  RecordingProgress progress("predicting", -1.0);
  EXPECT_THROW(simulate(large_scenario(), &progress), Cancelled);
  for (const auto& [stage, fraction] : progress.reports) EXPECT_NE(stage, "accumulating");
}

namespace {

// The coverage read off the plan (one count for all when uniform) against the walk over
// every record, which counts index by index.
struct CoverageRow {
  std::string name;
  std::string dataset;
  int world_size;
  bool shuffle;
  bool uniform;  // whether the plan's coverage is one count for all
};

void PrintTo(const CoverageRow& row, std::ostream* os) {
  *os << row.name;
}

class PlanCoverage : public ::testing::TestWithParam<CoverageRow> {};

}  // namespace

TEST_P(PlanCoverage, EqualsTheRecordWalk) {
  const CoverageRow& row = GetParam();
  Scenario s = base(row.world_size, 16);
  s.dataset = row.dataset;
  s.sampler.shuffle = row.shuffle;
  const Evaluation e = simulate(s);
  const RecordStats walked = collect_stats(*e.records, e.meta.dataset_size, e.classes());
  EXPECT_EQ(e.times_evaluated.is_uniform(), row.uniform);
  EXPECT_EQ(e.times_evaluated, walked.times);
  EXPECT_EQ(std::vector<uint8_t>(e.times_evaluated.begin(), e.times_evaluated.end()),
            std::vector<uint8_t>(walked.times.begin(), walked.times.end()));
  EXPECT_EQ(e.diagnosis.distinct_evaluated, walked.times.count_at_least(1));
  EXPECT_EQ(e.diagnosis.duplicated_samples, walked.times.count_at_least(2));
}

INSTANTIATE_TEST_SUITE_P(
    Plans, PlanCoverage,
    ::testing::Values(
        CoverageRow{"even_shuffled", "synthetic:classes=10,per-class=64", 8, true, true},
        CoverageRow{"even_in_order", "synthetic:classes=10,per-class=64", 4, false, true},
        CoverageRow{"padded_shuffled", "synthetic:classes=10,per-class=51", 4, true, false},
        CoverageRow{"padded_in_order", "synthetic:classes=7,n=99999,zipf=1.1", 8, false, false},
        CoverageRow{"large_even", "synthetic:classes=10,n=300000,zipf=1.1", 3, true, true}),
    shardlens::test::NamedRow());

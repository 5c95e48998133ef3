// A setting change recomputes only what it changes (evaluate()'s `earlier`, engine.h): every
// evaluation made from an earlier one equals the evaluation made from scratch, and the shard
// plan and per-rank counts are taken over only where nothing they depend on changed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/sim/engine.h"
#include "core/torchsem/rank_sum.h"

using namespace shardlens;

namespace {

// Shuffled, padded (1003 = 4 * 250 + 3) and batch-limited: every part of the plan matters.
Scenario base() {
  Scenario s;
  s.dataset = "synthetic:classes=7,per-class=143";
  s.predictor = "noisy:accuracy=0.7,seed=5";
  s.sampler.world_size = 4;
  s.sampler.shuffle = true;
  s.sampler.seed = 11;
  s.loader.batch_size = 16;
  s.loader.limit = BatchLimit::parse("12");
  return s;
}

std::vector<Pattern> patterns(const Diagnosis& d) {
  std::vector<Pattern> out;
  for (const Finding& f : d.findings) out.push_back(f.pattern);
  return out;
}

// Every field a view, report or diagnosis reads, against the evaluation made from scratch.
void expect_same(const Evaluation& reused, const Evaluation& fresh, const std::string& step) {
  SCOPED_TRACE(step);
  EXPECT_EQ(reused.per_rank, fresh.per_rank);
  EXPECT_EQ(reused.synced, fresh.synced);
  EXPECT_EQ(reused.expected, fresh.expected);
  EXPECT_EQ(reused.expected_distinct, fresh.expected_distinct);
  EXPECT_EQ(reused.rank_totals, fresh.rank_totals);
  EXPECT_EQ(reused.rank_correct, fresh.rank_correct);
  EXPECT_EQ(reused.row_check.wrong, fresh.row_check.wrong);
  EXPECT_TRUE(reused.times_evaluated == fresh.times_evaluated);
  EXPECT_EQ(reused.diagnosis.correct, fresh.diagnosis.correct);
  EXPECT_EQ(reused.diagnosis.mismatched_rows, fresh.diagnosis.mismatched_rows);
  EXPECT_EQ(patterns(reused.diagnosis), patterns(fresh.diagnosis));
  ASSERT_EQ(reused.plan->evaluated.size(), fresh.plan->evaluated.size());
  for (size_t r = 0; r < fresh.plan->evaluated.size(); ++r)
    EXPECT_EQ(reused.plan->evaluated[r].sequence.indices(),
              fresh.plan->evaluated[r].sequence.indices());
}

}  // namespace

// A sequence of toggles as a user clicks them, each evaluated from the one before: the sync
// strategy, the counter dtype and back, pad_across_processes, the epoch, the world size.
TEST(EvaluationReuse, EveryToggleEqualsAnEvaluationFromScratch) {
  Scenario s = base();
  const auto inputs = load_inputs(s);
  Evaluation shown = evaluate(s, inputs);
  const auto toggle = [&](const std::string& step, auto change) {
    change(s);
    Evaluation next = evaluate(s, inputs, nullptr, &shown);
    expect_same(next, evaluate(s, load_inputs(s)), step);
    shown = std::move(next);
  };
  toggle("local sync", [](Scenario& x) { x.sync = SyncStrategy::Local; });
  toggle("double sync", [](Scenario& x) { x.sync = SyncStrategy::Double; });
  toggle("float16 counter", [](Scenario& x) { x.dtype = CounterDtype::Float16; });
  toggle("gather, zero padded", [](Scenario& x) { x.sync = SyncStrategy::GatherZeroPad; });
  toggle("int64 counter again", [](Scenario& x) { x.dtype = CounterDtype::Int64; });
  toggle("ignore_index 3", [](Scenario& x) { x.ignore_index = 3; });
  toggle("pad across processes", [](Scenario& x) { x.pad_across_processes = true; });
  toggle("all-reduce again", [](Scenario& x) {
    x.sync = SyncStrategy::AllReduce;
    x.ignore_index = -1;
  });
  toggle("epoch 1", [](Scenario& x) { x.sampler.epoch = 1; });
  toggle("world size 3", [](Scenario& x) { x.sampler.world_size = 3; });
  toggle("every batch", [](Scenario& x) { x.loader.limit = BatchLimit(); });
  toggle("bfloat16 counter", [](Scenario& x) { x.dtype = CounterDtype::BFloat16; });
  toggle("normalized, then summed", [](Scenario& x) { x.sync = SyncStrategy::NormalizeThenSum; });
}

// The plan is taken over when only the sync or the counter changes, and drawn anew when
// the permutation (epoch, seed), the shards (world size) or the loader (batch size) change.
TEST(EvaluationReuse, ThePlanIsTakenOverOnlyWhenTheSamplerAndLoaderAgree) {
  const Scenario s = base();
  const auto inputs = load_inputs(s);
  const Evaluation first = evaluate(s, inputs);
  const auto plan_after = [&](auto change) {
    Scenario next = s;
    change(next);
    return evaluate(next, inputs, nullptr, &first).plan;
  };
  EXPECT_EQ(plan_after([](Scenario& x) { x.sync = SyncStrategy::Double; }), first.plan);
  EXPECT_EQ(plan_after([](Scenario& x) { x.dtype = CounterDtype::Float32; }), first.plan);
  EXPECT_EQ(plan_after([](Scenario& x) { x.pad_across_processes = true; }), first.plan);
  EXPECT_NE(plan_after([](Scenario& x) { x.sampler.epoch = 1; }), first.plan);
  EXPECT_NE(plan_after([](Scenario& x) { x.sampler.seed = 12; }), first.plan);
  EXPECT_NE(plan_after([](Scenario& x) { x.sampler.world_size = 5; }), first.plan);
  EXPECT_NE(plan_after([](Scenario& x) { x.loader.batch_size = 8; }), first.plan);
  EXPECT_NE(plan_after([](Scenario& x) { x.loader.sanity_leak = true; }), first.plan);
}

TEST(EvaluationReuse, CountsAreReusableOnlyForTheSameCounter) {
  const Scenario s = base();
  const auto inputs = load_inputs(s);
  const Evaluation first = evaluate(s, inputs);
  Scenario synced_twice = s;
  synced_twice.sync = SyncStrategy::Double;
  EXPECT_TRUE(reusable_counts(first, synced_twice, *inputs));
  Scenario rounded = s;
  rounded.dtype = CounterDtype::Float16;
  EXPECT_TRUE(reusable_plan(first, rounded, *inputs));
  EXPECT_FALSE(reusable_counts(first, rounded, *inputs));
  Scenario ignoring = s;
  ignoring.ignore_index = 0;
  EXPECT_FALSE(reusable_counts(first, ignoring, *inputs));
}

// Inputs loaded again (a dataset file changed on disk and reread) are other inputs, even
// when they hold the same samples: nothing is taken over.
TEST(EvaluationReuse, OtherInputsReuseNothing) {
  const Scenario s = base();
  const Evaluation first = evaluate(s, load_inputs(s));
  const auto reloaded = load_inputs(s);
  EXPECT_FALSE(reusable_plan(first, s, *reloaded));
  const Evaluation again = evaluate(s, reloaded, nullptr, &first);
  EXPECT_NE(again.plan, first.plan);
  expect_same(again, first, "reloaded inputs");
}

// A run read from a file is no simulation's earlier state, whatever its scenario says.
TEST(EvaluationReuse, ARunIsNeverTakenOver) {
  const Scenario s = base();
  const auto inputs = load_inputs(s);
  Evaluation run = evaluate(s, inputs);
  run.provenance.file = "run.slrun";
  EXPECT_FALSE(reusable_plan(run, s, *inputs));
  EXPECT_NE(evaluate(s, inputs, nullptr, &run).plan, run.plan);
}

// An int64 all-reduce hands the diagnosis its sum of the ranks (RecordStats::per_rank_sum);
// the diagnosis that sums them itself, from a walk over the records, finds the same.
TEST(EvaluationReuse, TheAllReduceSumGivenToTheDiagnosisChangesNoFinding) {
  Scenario s = base();
  s.loader.limit = BatchLimit();  // every batch: the padding's duplicates are the finding
  for (const bool shuffle : {false, true}) {
    s.sampler.shuffle = shuffle;
    const Evaluation given = evaluate(s, load_inputs(s));
    ASSERT_FALSE(given.diagnosis.correct);
    Evaluation walked = given;
    walked.diagnosis = Diagnosis();
    complete_evaluation(walked);  // no stats: the records are walked and the ranks summed
    EXPECT_EQ(patterns(walked.diagnosis), patterns(given.diagnosis));
    EXPECT_EQ(walked.diagnosis.mismatched_rows, given.diagnosis.mismatched_rows);
    EXPECT_EQ(walked.diagnosis.duplicated_samples, given.diagnosis.duplicated_samples);
  }
}

// A sync toggled between the strategies that sum the ranks (all-reduce, double) takes the
// ranks' sum from the shown result's reported matrix (core/torchsem/rank_sum.h), and every
// strategy after them is given that sum for its diagnosis: each step equals the evaluation
// from scratch, on 3 ranks (a double sync divided back by 3, which 1 / 3 would not give
// exactly) and on 4, and the diagnosis finds the double sync among the batch limit and
// padding findings.
TEST(EvaluationReuse, SyncTogglesBetweenSumsEqualEvaluationsFromScratch) {
  for (const int world : {3, 4}) {
    Scenario s = base();
    s.sampler.world_size = world;
    const auto inputs = load_inputs(s);
    Evaluation shown = evaluate(s, inputs);
    for (const SyncStrategy sync :
         {SyncStrategy::Double, SyncStrategy::AllReduce, SyncStrategy::Double,
          SyncStrategy::GatherTrim, SyncStrategy::Double, SyncStrategy::NormalizeThenSum,
          SyncStrategy::Double, SyncStrategy::Local, SyncStrategy::AllReduce}) {
      s.sync = sync;
      Evaluation next = evaluate(s, inputs, nullptr, &shown);
      const Evaluation fresh = evaluate(s, load_inputs(s));
      expect_same(next, fresh, std::to_string(world) + " ranks, " + to_string(sync));
      if (sync == SyncStrategy::Double) {
        const std::vector<Pattern> found = patterns(next.diagnosis);
        EXPECT_NE(std::find(found.begin(), found.end(), Pattern::DoubleSync), found.end());
      }
      shown = std::move(next);
    }
  }
}

// The two directions of rank_sum.h against synchronize() itself: what all-reduce and double
// report from the sum, the sum recovered from either, and no answer for a float counter or
// a strategy that is not a sum of the ranks.
TEST(EvaluationReuse, RankSumAndTheSyncedMatrixGiveEachOtherExactly) {
  std::vector<Matrix> ranks(3, Matrix(2));
  ranks[0].cells = {5, 1, 0, 7};
  ranks[1].cells = {2, 0, 3, 1};
  ranks[2].cells = {0, 9, 1, 1};
  Matrix sum(2);
  sum.cells = {7, 10, 4, 9};
  SyncInputs in;
  in.per_rank = &ranks;
  for (const SyncStrategy sync : {SyncStrategy::AllReduce, SyncStrategy::Double}) {
    SCOPED_TRACE(to_string(sync));
    const Matrix reported = synchronize(sync, in);
    EXPECT_EQ(synced_from_rank_sum(sync, CounterDtype::Int64, sum, 3), reported);
    EXPECT_EQ(rank_sum_from_synced(sync, CounterDtype::Int64, reported, 3), sum);
  }
  Matrix tripled(2);
  tripled.cells = {21, 30, 12, 27};
  EXPECT_EQ(synchronize(SyncStrategy::Double, in), tripled);
  EXPECT_EQ(rank_sum_from_synced(SyncStrategy::Double, CounterDtype::Float16, tripled, 3),
            std::nullopt);
  EXPECT_EQ(synced_from_rank_sum(SyncStrategy::Double, CounterDtype::Float32, sum, 3),
            std::nullopt);
  EXPECT_EQ(rank_sum_from_synced(SyncStrategy::Local, CounterDtype::Int64, ranks[0], 3),
            std::nullopt);
  EXPECT_EQ(synced_from_rank_sum(SyncStrategy::GatherTrim, CounterDtype::Int64, sum, 3),
            std::nullopt);
  EXPECT_EQ(rank_sum_from_synced(SyncStrategy::AllReduce, CounterDtype::Int64, sum, 0),
            std::nullopt);
}

// At 1000 classes the int64 all-reduce adds its two halves of cells on two cores, the ranks'
// totals are read beside the diagnosis and a toggle copies the per-rank matrices on two
// cores: the same sums as one pass in the ranks' order and as Matrix::total(), the same
// evaluation as from scratch.
TEST(EvaluationReuse, TheLargeAllReduceAndTalliesEqualPlainSums) {
  constexpr int32_t kClasses = 1000;
  std::vector<Matrix> ranks(5, Matrix(kClasses));
  for (size_t r = 0; r < ranks.size(); ++r)
    for (size_t i = 0; i < ranks[r].cells.size(); i += 7 + r)
      ranks[r].cells[i] = double(i % 13 + r);
  Matrix plain(kClasses);
  for (const Matrix& m : ranks)
    for (size_t i = 0; i < plain.cells.size(); ++i) plain.cells[i] += m.cells[i];
  SyncInputs in;
  in.per_rank = &ranks;
  EXPECT_EQ(synchronize(SyncStrategy::AllReduce, in), plain);

  Scenario s;
  s.dataset = "synthetic:classes=1000,per-class=3";
  s.sampler.world_size = 2;
  s.sampler.shuffle = true;
  const Evaluation e = simulate(s);
  ASSERT_EQ(e.rank_totals.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(e.rank_totals[r], e.per_rank[r].total());
    EXPECT_EQ(e.rank_correct[r], e.per_rank[r].diagonal_sum());
  }
  EXPECT_EQ(e.rank_totals[0] + e.rank_totals[1], 3000);

  // A sync toggled on 5 ranks of 1000 classes: the per-rank matrices are copied on two cores.
  s.sampler.world_size = 5;
  const auto inputs = load_inputs(s);
  const Evaluation shown = evaluate(s, inputs);
  s.sync = SyncStrategy::Double;
  expect_same(evaluate(s, inputs, nullptr, &shown), evaluate(s, load_inputs(s)),
              "1000 classes, double");
}

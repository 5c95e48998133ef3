// Accelerate's even_batches=False as it runs: the ranks' step counts and last batches, which
// per-step gathers hang (different step counts) or fail (unequal last batches, unpadded), and
// what gather_for_metrics keeps once pad_across_processes pads the last step.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/diagnosis/catalogue.h"
#include "core/evaluation/scenario_settings.h"
#include "core/report/verdict.h"
#include "core/runfile/import.h"
#include "core/sim/engine.h"
#include "core/torchsem/loader.h"
#include "core/torchsem/sync.h"
#include "core/vocabulary/records.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

Scenario uneven(int64_t n, int w, int64_t b, bool split = false) {
  Scenario s;
  s.dataset = "synthetic:counts=" + std::to_string(n / 2) + "," + std::to_string(n - n / 2);
  s.predictor = "noisy:accuracy=0.8,seed=3";
  s.sampler.kind = SamplerKind::Accelerate;
  s.sampler.world_size = w;
  s.sampler.even_batches = false;
  s.sampler.split_batches = split;
  s.loader.batch_size = b;
  s.sync = SyncStrategy::GatherForMetrics;
  return s;
}

StepLayout layout_of(const Scenario& s, int64_t n) {
  return step_layout(plan_shards(n, s.sampler, s.loader));
}

std::vector<Pattern> patterns(const Evaluation& e) {
  std::vector<Pattern> out;
  for (const Finding& f : e.diagnosis.findings) out.push_back(f.pattern);
  return out;
}

// The run that was found: 1000 samples, batches of 32, 4 ranks. 32 batches dealt round-robin:
// 8 steps on every rank, rank 3's last batch holds 1000 - 31 x 32 = 8 samples.
TEST(AccelerateUneven, EqualStepsWithAShortLastBatchAreNotUnevenSteps) {
  const StepLayout l = layout_of(uneven(1000, 4, 32), 1000);
  EXPECT_EQ(l.steps, (std::vector<int64_t>{8, 8, 8, 8}));
  EXPECT_EQ(l.last_batch, (std::vector<int64_t>{32, 32, 32, 8}));
  EXPECT_FALSE(l.different_steps());
  EXPECT_TRUE(l.unequal_last_batches());
  EXPECT_FALSE(l.even());
}

TEST(AccelerateUneven, DifferentStepCountsAreTold) {
  // 13 batches of 2 on 4 ranks: rank 0 runs 4 steps, the others 3.
  const StepLayout l = layout_of(uneven(25, 4, 2), 25);
  EXPECT_EQ(l.steps, (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_TRUE(l.different_steps());
  EXPECT_FALSE(l.unequal_last_batches());
  // 64 = 16 batches of 4: every rank 4 full steps.
  EXPECT_TRUE(layout_of(uneven(64, 4, 4), 64).even());
  // split_batches: 510 = 31 x 16 + 14, slices of 4: ranks 0-2 take 4 of the last batch,
  // rank 3 the 2 left; 500 = 31 x 16 + 4: only rank 0 has a 32nd step.
  const StepLayout split = layout_of(uneven(510, 4, 16, true), 510);
  EXPECT_EQ(split.last_batch, (std::vector<int64_t>{4, 4, 4, 2}));
  EXPECT_TRUE(split.unequal_last_batches());
  EXPECT_TRUE(layout_of(uneven(500, 4, 16, true), 500).different_steps());
}

TEST(AccelerateUneven, UnpaddedUnequalLastBatchesFailTheGatherAndSaySo) {
  const Evaluation e = simulate(uneven(1000, 4, 32));
  EXPECT_FALSE(e.synced);
  EXPECT_EQ(patterns(e), std::vector<Pattern>{Pattern::UnequalLastBatches});
  EXPECT_NE(e.synced_missing.find("last batches differ in size (32, 32, 32, 8"), std::string::npos)
      << e.synced_missing;
  EXPECT_EQ(e.synced_missing.find("hang"), std::string::npos) << e.synced_missing;
  // The finding's words and the verdict agree with the layout: same steps, no hang.
  const FindingText t = describe(e.diagnosis.findings.front());
  EXPECT_NE(t.explanation.find("Every rank runs 8 steps"), std::string::npos) << t.explanation;
  EXPECT_NE(t.explanation.find("rank 3: 8 steps (232 samples, last batch 8)"), std::string::npos)
      << t.explanation;
  EXPECT_EQ(t.explanation.find("different step counts"), std::string::npos) << t.explanation;
  bool pads = false;
  for (const Fix& f : t.fixes)
    pads = pads || f.text.find("pad_across_processes") != std::string::npos;
  EXPECT_TRUE(pads);
  const Verdict v = verdict_of(e);
  EXPECT_EQ(v.kind, VerdictKind::Incomplete);
  EXPECT_NE(v.sentence.find("last batches differ in size"), std::string::npos) << v.sentence;
  EXPECT_EQ(v.sentence.find("different step counts"), std::string::npos) << v.sentence;
}

TEST(AccelerateUneven, DifferentStepCountsStillHang) {
  Scenario s = uneven(25, 4, 2);
  s.pad_across_processes = true;  // padding cannot give a rank the step it does not run
  const Evaluation e = simulate(s);
  EXPECT_FALSE(e.synced);
  EXPECT_EQ(patterns(e), std::vector<Pattern>{Pattern::UnevenSteps});
  EXPECT_NE(e.synced_missing.find("(4, 3, 3, 3"), std::string::npos) << e.synced_missing;
  const Verdict v = verdict_of(e);
  EXPECT_NE(v.sentence.find("different step counts"), std::string::npos) << v.sentence;
}

// With pad_across_processes the last step gathers 4 x 32 rows; gather_for_metrics keeps the
// first len(dataset) % 128 = 104 of them: ranks 0-2's 96 and rank 3's 8, the 24 padded rows
// dropped. Every sample counted once: the exact matrix.
TEST(AccelerateUneven, PaddedGatherForMetricsIsExact) {
  Scenario s = uneven(1000, 4, 32);
  s.pad_across_processes = true;
  const Evaluation e = simulate(s);
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.synced->total(), 1000);
  EXPECT_TRUE(e.diagnosis.correct) << pattern_id(e.diagnosis.findings.front().pattern);
  Matrix ranks(e.classes());
  for (const Matrix& m : e.per_rank) ranks += m;
  EXPECT_EQ(e.synced->cells, ranks.cells);
  // split_batches alike: the last batch of 14 is cut to its 14 rows.
  s = uneven(510, 4, 16, true);
  s.pad_across_processes = true;
  const Evaluation split = simulate(s);
  ASSERT_TRUE(split.synced);
  EXPECT_EQ(split.synced->total(), 510);
  EXPECT_TRUE(split.diagnosis.correct);
}

// A plain gather is never truncated: the padded rows are counted as (0, 0) pairs.
TEST(AccelerateUneven, PaddedPlainGatherCountsThePaddedRows) {
  Scenario s = uneven(1000, 4, 32);
  s.pad_across_processes = true;
  s.sync = SyncStrategy::Gather;
  const Evaluation e = simulate(s);
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.synced->total(), 1024);
  Matrix ranks(e.classes());
  for (const Matrix& m : e.per_rank) ranks += m;
  EXPECT_EQ(e.synced->at(0, 0) - ranks.at(0, 0), 24);
  EXPECT_FALSE(e.diagnosis.correct);
}

// The padded rows sit where all_gather puts them: a rank's padding comes before the next
// rank's rows, so only a step whose short batches are last loses them all to the truncation.
TEST(AccelerateUneven, GatherForMetricsRecordsPadEachStepToItsLongest) {
  StoredRecords records;
  records.ranks = {{{0, 1, 1, 0}, {1, 1, 1, 0}, {2, 1, 1, 0}},  // batches of 2: [0 1] [2]
                   {{3, 1, 1, 0}, {4, 1, 1, 0}}};               // [3 4]
  // Dataset of 5, W = 2, B = 2: remainder 5 % 4 = 1; the last step gathers [2, pad, ...].
  const std::vector<Record> padded = gather_for_metrics_records(records, 5, 2, true, true);
  ASSERT_EQ(padded.size(), 5u);  // step 0: 4 rows; step 1: [2, 0] cut to 1
  EXPECT_EQ(padded.back().index, 2);
  // Without the loader's end (no truncation) the padded row stays: 4 + 2.
  EXPECT_EQ(gather_for_metrics_records(records, 5, 2, false, true).size(), 6u);
  EXPECT_EQ(gather_for_metrics_records(records, 5, 2, false, false).size(), 5u);
}

// Like even_batches and split_batches, pad_across_processes belongs to Accelerate's sampler:
// with another sampler it is valid (the GUI's checkbox can be on before the sampler changes)
// and changes nothing.
TEST(AccelerateUneven, PadAcrossProcessesIsASettingOfAccelerateOnly) {
  Scenario s = uneven(1000, 4, 32);
  s.pad_across_processes = true;
  EXPECT_NE(scenario_flags(s).find("--pad-across-processes"), std::string::npos);
  EXPECT_NO_THROW(validate(s));
  s.sampler.kind = SamplerKind::Distributed;
  EXPECT_NO_THROW(validate(s));
  const Evaluation padded = simulate(s);
  s.pad_across_processes = false;
  const Evaluation plain = simulate(s);
  ASSERT_TRUE(padded.synced && plain.synced);
  EXPECT_EQ(padded.synced->cells, plain.synced->cells);
  EXPECT_EQ(padded.diagnosis.findings.size(), plain.diagnosis.findings.size());
}

// A dump's rows that pad_across_processes added (flag PAD_ROW, 4) are no samples: the import
// leaves them out, counts them and says so.
TEST(AccelerateUneven, ImportLeavesOutThePaddedRowsAndSaysHowMany) {
  const auto dir = std::filesystem::temp_directory_path() / "shardlens_pad_rows_import";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "eval_rank0_1.csv").string();
  {
    // Rank 0 evaluated 0 and 1; rank 1 evaluated 2, its tensor padded to 2 rows.
    std::ofstream f(path);
    f << "rank,index,target,prediction,flags\n0,0,1,1,0\n0,1,0,0,0\n1,2,1,0,0\n1,0,0,0,4\n";
  }
  const ImportedRun run = import_epochs({path}, {});
  ASSERT_EQ(run.epochs.size(), 1u);
  const RunFile& r = run.epochs.front();
  EXPECT_EQ(r.records.ranks.at(0).size(), 2u);
  ASSERT_EQ(r.records.ranks.at(1).size(), 1u);
  EXPECT_EQ(r.records.ranks[1][0].index, 2);
  EXPECT_EQ(r.synced.total(), 3);
  ASSERT_EQ(run.notes.size(), 1u);
  EXPECT_EQ(run.notes.front(),
            "1 rows pad_across_processes added (flag PAD_ROW) were not counted as samples");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shardlens

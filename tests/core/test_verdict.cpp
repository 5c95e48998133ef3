// What a report may claim (core/report/verdict.h): the synced matrix named by where it came
// from, one verdict consistent with the rows, and what the records could not prove.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

#include "core/report/report.h"
#include "core/report/verdict.h"
#include "core/runfile/import.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"

using namespace shardlens;

namespace {

// Two ranks, 3 classes: rank 0 evaluated indices 0..2, rank 1 indices 3..5; target = index % 3
// and every prediction right. `dataset_size` as the dumps declare it.
std::vector<RankDump> two_rank_dumps(int64_t dataset_size, std::optional<double> reported_scale) {
  std::vector<RankDump> dumps(2);
  Matrix sum(3);
  for (int r = 0; r < 2; ++r) {
    RankDump& d = dumps[size_t(r)];
    d.origin = "rank" + std::to_string(r) + ".npz";
    d.world_size = 2;
    d.dataset_size = dataset_size;
    for (int64_t i = 3 * r; i < 3 * r + 3; ++i) {
      const int32_t c = int32_t(i % 3);
      d.records.push_back({i, c, c, 0});
      d.ranks.push_back(r);
      sum.at(c, c) += 1;
    }
  }
  // What the run logged: the all-reduced matrix, scaled (2: synced twice).
  if (reported_scale)
    for (RankDump& d : dumps) d.reported = sum.scaled(*reported_scale);
  return dumps;
}

Evaluation imported(const std::vector<RankDump>& dumps) {
  ImportOptions options;
  options.classes = 3;
  return evaluation_from_run(import_dumps(dumps, options), "dumps");
}

// The same evaluation after a save and a load: the origin is part of the run file.
Evaluation reopened(const Evaluation& e) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("shardlens_verdict_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "run.slrun").string();
  save_run_file(run_from_evaluation(e), path);
  Evaluation back = evaluation_from_run(load_run_file(path), path);
  std::filesystem::remove_all(dir);
  return back;
}

bool has_pattern(const Evaluation& e, const char* id) {
  for (const Finding& f : e.diagnosis.findings)
    if (std::string(pattern_id(f.pattern)) == id) return true;
  return false;
}

TEST(Verdict, DumpsWithoutAReportedMatrixSayTheSyncIsUnchecked) {
  const Evaluation e = imported(two_rank_dumps(6, std::nullopt));
  EXPECT_EQ(synced_origin_of(e.meta), SyncedOrigin::SumOfRanks);
  EXPECT_EQ(synced_title(e), "Sum of the ranks (computed)");
  EXPECT_EQ(difference_title(e), "Sum of the ranks − expected");
  // Every sample once, every prediction right: the sum is correct, and that is all it proves.
  const Verdict v = verdict_of(e);
  EXPECT_EQ(v.kind, VerdictKind::Correct);
  EXPECT_NE(v.sentence.find("sum of the ranks"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find("cannot be ruled out"), std::string::npos) << v.sentence;
  EXPECT_EQ(v.sentence.find("reported matrix equals"), std::string::npos) << v.sentence;
  ASSERT_EQ(unchecked(e).size(), 1u);
  EXPECT_NE(unchecked(e)[0].find("double, missing or half-precision sync cannot be seen"),
            std::string::npos);
  const std::string text = report_text(e);
  EXPECT_NE(text.find("not checked: The dumps hold no reported matrix"), std::string::npos) << text;
  EXPECT_EQ(text.find("Synced (reported)"), std::string::npos) << text;
  EXPECT_NE(text.find("Sum of the ranks (computed), rows = true class:"), std::string::npos);
  const nlohmann::json j = report_json(e);
  EXPECT_EQ(j["verdict"]["synced_origin"], "sum-of-ranks");
  EXPECT_EQ(j["verdict"]["unchecked"].size(), 1u);
  // The origin survives a save: the reopened file says the same.
  const Evaluation back = reopened(e);
  EXPECT_EQ(back.meta.synced_origin, SyncedOrigin::SumOfRanks);
  EXPECT_EQ(verdict_of(back).sentence, v.sentence);
}

TEST(Verdict, ARecordedReportedMatrixShowsADoubleSync) {
  // The same records; the run logged 12 for 6 samples. Only the recorded matrix shows it.
  const Evaluation e = imported(two_rank_dumps(6, 2.0));
  EXPECT_EQ(synced_origin_of(e.meta), SyncedOrigin::Recorded);
  EXPECT_EQ(synced_title(e), "Reported by the run");
  EXPECT_EQ(difference_title(e), "Reported − expected");
  EXPECT_TRUE(unchecked(e).empty());
  EXPECT_TRUE(has_pattern(e, "double-sync"));
  const Verdict v = verdict_of(e);
  EXPECT_EQ(v.kind, VerdictKind::Wrong);
  // All three rows are twice their class count (2 each).
  EXPECT_NE(v.sentence.find("has 3 rows whose sums differ from the class counts"),
            std::string::npos)
      << v.sentence;
}

TEST(Verdict, AnImportWithoutLabelsGivesOneVerdictAndSaysWhatIsEstimated) {
  // The dumps declare 10 samples; 6 were evaluated, so 4 were never seen and their classes
  // are unknown without labels: every row matches the estimate, yet the matrix is wrong.
  const Evaluation e = imported(two_rank_dumps(10, 1.0));
  ASSERT_NE(e.meta.class_counts_source, "dataset");
  ASSERT_EQ(e.diagnosis.missing_samples, 10 - 6);
  ASSERT_TRUE(e.diagnosis.mismatched_rows.empty());
  const Verdict v = verdict_of(e);
  EXPECT_EQ(v.kind, VerdictKind::Wrong);
  EXPECT_NE(v.sentence.find("in every row, but 4 samples of the 10 the dumps declare were never "
                            "evaluated"),
            std::string::npos)
      << v.sentence;
  EXPECT_EQ(v.sentence.find("0 row"), std::string::npos) << v.sentence;
  EXPECT_EQ(v.status, "⚠ 4 samples never evaluated (classes unknown)");
  // The report's first line after its title says what is estimated and how to give labels.
  const std::string text = report_text(e);
  std::istringstream lines(text);
  std::string title, underline, first;
  std::getline(lines, title);
  std::getline(lines, underline);
  std::getline(lines, first);
  EXPECT_EQ(first.rfind("ESTIMATED: ", 0), 0u) << text;
  EXPECT_NE(first.find("6 distinct samples"), std::string::npos) << first;
  EXPECT_NE(first.find("4 samples never evaluated"), std::string::npos) << first;
  EXPECT_NE(first.find("--dataset npy:labels.npy"), std::string::npos) << first;
  // One verdict line, and it is the one above.
  EXPECT_EQ(text.find("Verdict:"), text.rfind("Verdict:"));
  EXPECT_NE(text.find("Verdict: " + v.sentence), std::string::npos);
  EXPECT_TRUE(report_json(e)["verdict"].contains("estimated"));
}

TEST(Verdict, AnUnsyncedRunNamesTheRankWhoseMatrixItShows) {
  const Evaluation e = simulate(load_preset("unsynced"));
  ASSERT_TRUE(has_pattern(e, "unsynced"));
  EXPECT_EQ(synced_title(e), "Reported = rank 0's own (unsynced)");
  EXPECT_EQ(difference_title(e), "Rank 0's own − expected");
  EXPECT_NE(report_text(e).find("rank 0's own local matrix (no sync)"), std::string::npos);
  // A correct sync of the same lesson keeps the simulation's name.
  Scenario synced = load_preset("unsynced");
  synced.sync = SyncStrategy::AllReduce;
  EXPECT_EQ(synced_title(simulate(synced)), "Synced (reported)");
  EXPECT_EQ(difference_title(simulate(synced)), "Synced − expected");
}

}  // namespace

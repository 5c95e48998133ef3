// One evaluation for simulations and runs: a simulation saved as a run file and opened again
// is the same evaluation to every consumer (matrices, coverage, diagnosis, reports, exports),
// and what a run lacks is absent rather than made up.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/io/files.h"
#include "core/report/compare.h"
#include "core/report/export.h"
#include "core/report/report.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/validations.h"
#include "tests/common/small_run.h"
#include "tests/common/test_rows.h"
#include "tests/core/pattern_rows.h"

namespace shardlens {
namespace {

std::vector<std::string> patterns(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const Finding& f : d.findings) out.push_back(pattern_id(f.pattern));
  return out;
}

// Saved as a run file and read back through the file format.
Evaluation reopened(const Evaluation& e) {
  // One folder per test process: ctest runs the tests of this file in parallel.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("shardlens_eval_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "sim.slrun").string();
  save_run_file(run_from_evaluation(e), path);
  Evaluation back = evaluation_from_run(load_run_file(path), "sim.slrun");
  std::filesystem::remove_all(dir);
  return back;
}

// A lesson by its preset name.
struct LessonRow {
  std::string name;
};

void PrintTo(const LessonRow& r, std::ostream* os) {
  *os << r.name;
}

class LessonSavedAsARun : public testing::TestWithParam<LessonRow> {};

// Every lesson: the reopened run carries the same matrices, coverage and findings.
TEST_P(LessonSavedAsARun, IsTheSameEvaluation) {
  const std::string& name = GetParam().name;
  const Evaluation sim = simulate(load_preset(name));
  const Evaluation run = reopened(sim);
  EXPECT_EQ(run.per_rank, sim.per_rank) << name;
  EXPECT_EQ(run.synced, sim.synced) << name;
  EXPECT_EQ(run.expected, sim.expected) << name;
  EXPECT_EQ(run.expected_distinct, sim.expected_distinct) << name;
  EXPECT_EQ(run.times_evaluated, sim.times_evaluated) << name;
  EXPECT_EQ(run.meta.class_names, sim.meta.class_names) << name;
  EXPECT_EQ(run.meta.class_counts, sim.meta.class_counts) << name;
  EXPECT_EQ(patterns(run.diagnosis), patterns(sim.diagnosis)) << name;
  EXPECT_EQ(run.diagnosis.mismatched_rows, sim.diagnosis.mismatched_rows) << name;
  // The run knows no plan and no per-index predictions; nothing stands in for them.
  EXPECT_EQ(run.plan, nullptr) << name;
  EXPECT_EQ(run.inputs, nullptr) << name;
  EXPECT_EQ(run.provenance.file, "sim.slrun") << name;
  // The reports differ only where the provenance does.
  nlohmann::json a = report_json(sim), b = report_json(run);
  b.erase("run_file");
  EXPECT_EQ(a, b) << name;
}

INSTANTIATE_TEST_SUITE_P(Evaluation, LessonSavedAsARun,
                         testing::Values(LessonRow{"padding-duplicates"}, LessonRow{"sanity-leak"},
                                         LessonRow{"counter-precision"}, LessonRow{"unsynced"},
                                         LessonRow{"gather-zero-pad"},
                                         LessonRow{"batch-limit-subset"},
                                         LessonRow{"ignored-targets"}),
                         test::NamedRow{});

// Every lesson, every validation of it: its run file passes the load's checks against the
// records (core/runfile/record_checks.h) and keeps its matrices and verdict. Patterns that
// need the other validations of the epoch (repeated-validation-subset) are compared where the
// epoch has one; a simulation that hangs before its sync is saved as an incomplete run.
class EveryLessonSavedAsARun : public testing::TestWithParam<LessonRow> {};

TEST_P(EveryLessonSavedAsARun, LoadsAndKeepsItsDiagnosis) {
  const std::string& name = GetParam().name;
  const std::vector<Evaluation> sims = simulate_validations(load_preset(name));
  for (const Evaluation& sim : sims) {
    RunFile file = run_from_evaluation(sim);
    file.meta.complete = sim.synced.has_value();
    const std::string bytes = [&] {
      const auto dir = std::filesystem::temp_directory_path() /
                       ("shardlens_every_lesson_" + std::to_string(::getpid()));
      std::filesystem::create_directories(dir);
      const std::string path = (dir / "lesson.slrun").string();
      save_run_file(file, path);
      std::string out = read_file_bytes(path);
      std::filesystem::remove_all(dir);
      return out;
    }();
    const Evaluation run =
        evaluation_from_run(parse_run_file(bytes, "lesson.slrun"), "lesson.slrun");
    EXPECT_EQ(run.per_rank, sim.per_rank) << name;
    EXPECT_EQ(run.synced, sim.synced) << name;
    EXPECT_EQ(run.expected, sim.expected) << name;
    EXPECT_EQ(run.diagnosis.correct, sim.diagnosis.correct) << name;
    if (sims.size() == 1 && sim.synced) {
      EXPECT_EQ(patterns(run.diagnosis), patterns(sim.diagnosis)) << name;
    }
  }
}

std::vector<LessonRow> every_lesson() {
  std::vector<LessonRow> rows;
  for (const LessonInfo& l : load_lessons().lessons) rows.push_back({l.name});
  return rows;
}

INSTANTIATE_TEST_SUITE_P(Evaluation, EveryLessonSavedAsARun, testing::ValuesIn(every_lesson()),
                         test::NamedRow{});

TEST(Evaluation, RecordsOfARunReadLikeASimulations) {
  const Evaluation sim = simulate(load_preset("padding-duplicates"));
  const Evaluation run = reopened(sim);
  ASSERT_EQ(run.records->world_size(), sim.records->world_size());
  for (int r = 0; r < sim.records->world_size(); ++r) {
    std::vector<Record> a, b;
    for_each_record(*sim.records, r, [&](const Record& x) { a.push_back(x); });
    for_each_record(*run.records, r, [&](const Record& x) { b.push_back(x); });
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].index, b[i].index);
      EXPECT_EQ(a[i].flags, b[i].flags);
      EXPECT_EQ(a[i].prediction, b[i].prediction);
    }
  }
}

// An incomplete run: no synced matrix, one incomplete-run finding, reports and exports that
// say so instead of showing zeros.
TEST(Evaluation, IncompleteRunIsReportedAndExported) {
  RunFile file = test::small_run();
  file.synced = Matrix();
  file.meta.complete = false;
  file.meta.failed_ranks = {1};
  file.meta.incomplete_reason = "rank 1 failed: connection closed";
  const Evaluation e = evaluation_from_run(file, "partial.slrun");
  EXPECT_FALSE(e.synced.has_value());
  EXPECT_FALSE(e.diagnosis.correct);
  EXPECT_EQ(patterns(e.diagnosis), std::vector<std::string>{"incomplete-run"});
  const nlohmann::json j = report_json(e);
  EXPECT_TRUE(j["synced"].is_null());
  EXPECT_NE(j["incomplete"].get<std::string>().find("rank 1 failed"), std::string::npos);
  EXPECT_EQ(j["failed_ranks"], nlohmann::json::array({1}));
  const std::string text = report_text(e);
  EXPECT_NE(text.find("INCOMPLETE"), std::string::npos) << text;
  EXPECT_NE(text.find("[incomplete-run]"), std::string::npos) << text;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("shardlens_incomplete_export_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto written = export_data(e, dir.string(), {"csv", "npy"});
  EXPECT_TRUE(std::filesystem::exists(dir / "per_rank_1.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "report.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "synced.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "difference.csv"));
  std::filesystem::remove_all(dir);
}

// The distinct-sample matrix of a run comes from its records: index 0 is counted once
// although rank 1 evaluated it again as padding. Every index was evaluated, so every
// prediction is known and that is the expected matrix too.
TEST(Evaluation, RunThatEvaluatedEverySampleKnowsTheExpectedMatrix) {
  const Evaluation e = evaluation_from_run(test::small_run(), "small.slrun");
  Matrix want(3);
  want.at(0, 0) = 2;  // indices 0 and 1
  want.at(1, 1) = 1;  // 2
  want.at(2, 2) = 2;  // 4, 5
  want.at(0, 1) = 1;  // 6
  want.at(1, 2) = 1;  // 3
  EXPECT_EQ(e.expected_distinct, want);
  EXPECT_EQ(e.expected, want);
  EXPECT_TRUE(e.expected_missing.empty());
  ASSERT_TRUE(e.difference().has_value());
  EXPECT_EQ(e.difference()->at(0, 0), 1);  // the padding duplicate
  EXPECT_EQ(e.times_evaluated, (std::vector<uint8_t>{2, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(e.meta.class_names, (std::vector<std::string>{"cat", "dog", "émeu"}));
}

// A sample never evaluated has no known prediction: no expected matrix, and the reason.
TEST(Evaluation, RunThatMissedSamplesSaysWhyTheExpectedMatrixIsUnknown) {
  RunFile run = test::small_run();
  run.records.ranks[0].pop_back();  // index 6, never evaluated now
  run.per_rank = matrices_from_records(run.records, 3, -1);
  run.synced = run.per_rank[0];
  run.synced += run.per_rank[1];
  const Evaluation e = evaluation_from_run(run, "small.slrun");
  EXPECT_FALSE(e.expected.has_value());
  EXPECT_FALSE(e.difference().has_value());
  EXPECT_NE(e.expected_missing.find("1 of 7 samples were never evaluated"), std::string::npos)
      << e.expected_missing;
  EXPECT_EQ(report_json(e)["expected_missing"], e.expected_missing);
}

TEST(Evaluation, PatternIdsRoundTrip) {
  EXPECT_STREQ(pattern_id(Pattern::IncompleteRun), "incomplete-run");
  EXPECT_EQ(pattern_from_id("padding-duplicates"), Pattern::PaddingDuplicates);
  EXPECT_FALSE(pattern_from_id("no-such-pattern").has_value());
  EXPECT_EQ(pattern_from_id("accelerate-double-shard"), Pattern::AccelerateDoubleShard);
  EXPECT_EQ(all_patterns().size(), 27u);
  EXPECT_FALSE(describe_pattern(Pattern::IncompleteRun).fixes.empty());
}

class PatternId : public testing::TestWithParam<PatternRow> {};

// Every pattern has its text and fixes, and round-trips.
TEST_P(PatternId, RoundTripsWithTextAndFixes) {
  const Pattern p = GetParam().pattern;
  EXPECT_EQ(pattern_from_id(pattern_id(p)), p);
  EXPECT_FALSE(describe_pattern(p).title.empty()) << pattern_id(p);
  EXPECT_FALSE(describe_pattern(p).fixes.empty()) << pattern_id(p);
}

INSTANTIATE_TEST_SUITE_P(Evaluation, PatternId, testing::ValuesIn(pattern_rows()),
                         test::NamedRow{});

// A simulation and the run file of another epoch of it: the comparison lists exactly the
// cells and rows where the two reported matrices differ.
TEST(Evaluation, ComparingTwoEpochs) {
  Scenario s = load_preset("seed-lesson");
  s.sampler.epoch = 0;
  const Evaluation a = simulate(s);
  s.sampler.epoch = 1;
  const Evaluation b = reopened(simulate(s));
  const Comparison c = compare_evaluations(a, b);
  ASSERT_TRUE(c.comparable);
  EXPECT_FALSE(c.equal);
  int64_t cells = 0;
  for (size_t i = 0; i < a.synced->cells.size(); ++i) {
    EXPECT_EQ(c.difference.cells[i], b.synced->cells[i] - a.synced->cells[i]);
    cells += a.synced->cells[i] != b.synced->cells[i];
  }
  EXPECT_EQ(c.cells_differing, cells);
  const auto ra = a.synced->row_sums(), rb = b.synced->row_sums();
  std::vector<int32_t> rows;
  for (size_t r = 0; r < ra.size(); ++r)
    if (ra[r] != rb[r]) rows.push_back(int32_t(r));
  EXPECT_EQ(c.rows, rows);
  EXPECT_FALSE(rows.empty());  // the seed lesson's rows drift between epochs
  EXPECT_TRUE(compare_evaluations(a, a).equal);
  Scenario three;
  three.dataset = "synthetic:classes=3,per-class=4";
  ASSERT_NE(a.classes(), 3);
  const Comparison other = compare_evaluations(a, simulate(three));
  EXPECT_FALSE(other.comparable);
  EXPECT_NE(other.why.find("classes"), std::string::npos);
}

}  // namespace
}  // namespace shardlens

namespace shardlens {
namespace {

// The CLI's --format json streamed (write_reports_json) against the json tree's own dump:
// every byte the same, for one evaluation, several, and matrices whose cells take every
// path of the number rule (integers, fractions, negatives, huge, inf, nan).
struct StreamedRow {
  std::string name;
  std::function<std::vector<Evaluation>()> make;
};

void PrintTo(const StreamedRow& r, std::ostream* os) {
  *os << r.name;
}

class StreamedReport : public testing::TestWithParam<StreamedRow> {};

TEST_P(StreamedReport, IsTheTreesDumpByteForByte) {
  const std::vector<Evaluation> e = GetParam().make();
  std::ostringstream streamed;
  write_reports_json(streamed, e);
  EXPECT_EQ(streamed.str(), reports_json(e).dump(2));
}

std::vector<Evaluation> lesson(const std::string& name) {
  return {simulate(load_preset(name))};
}

std::vector<Evaluation> odd_cells() {
  Evaluation e = simulate(load_preset("padding-duplicates"));
  Matrix& m = e.per_rank.at(0);
  m.cells.at(0) = 0.5;
  m.cells.at(1) = -3;
  m.cells.at(2) = 1e16;
  m.cells.at(3) = std::numeric_limits<double>::infinity();
  m.cells.at(4) = std::nan("");
  m.cells.at(5) = -0.0;
  m.cells.at(6) = 1.0 / 3.0;
  return {e};
}

std::vector<Evaluation> several() {
  return {simulate(load_preset("sanity-leak")), simulate(load_preset("unsynced"))};
}

std::vector<Evaluation> thousand_classes() {
  Scenario s;
  s.dataset = "synthetic:classes=1000,n=20000,zipf=1.1";
  s.sampler.world_size = 3;
  s.sampler.shuffle = true;
  s.loader.batch_size = 7;
  return {simulate(s)};
}

INSTANTIATE_TEST_SUITE_P(
    Reports, StreamedReport,
    testing::Values(StreamedRow{"padding_duplicates", [] { return lesson("padding-duplicates"); }},
                    StreamedRow{"counter_precision", [] { return lesson("counter-precision"); }},
                    StreamedRow{"unsynced", [] { return lesson("unsynced"); }},
                    StreamedRow{"gather_zero_pad", [] { return lesson("gather-zero-pad"); }},
                    StreamedRow{"ignored_targets", [] { return lesson("ignored-targets"); }},
                    StreamedRow{"odd_cells", odd_cells}, StreamedRow{"several_epochs", several},
                    StreamedRow{"thousand_classes", thousand_classes}),
    test::NamedRow{});

// What release_samples drops is what the report never reads: the same JSON before and after.
TEST(Evaluation, ReleasedSamplesLeaveTheReportAlone) {
  std::vector<Evaluation> e = thousand_classes();
  const std::string before = reports_json(e).dump(2);
  release_samples(e.front());
  EXPECT_FALSE(e.front().plan);
  EXPECT_FALSE(e.front().inputs);
  EXPECT_TRUE(e.front().times_evaluated.empty());
  EXPECT_EQ(reports_json(e).dump(2), before);
}

// A finding over 1000 classes reads on one short line: a run of consecutive classes as its
// range, never the 1000 ids one after another.
TEST(Evaluation, AThousandClassesAreSummarisedInTheReport) {
  Scenario s;
  s.dataset = "synthetic:classes=1000,per-class=3";
  s.predictor = "perfect";
  s.sampler.world_size = 4;
  s.loader.batch_size = 8;
  s.loader.limit = BatchLimit::parse("1");  // 32 of 3000 evaluated: every class misses some
  const Evaluation e = simulate(s);
  const std::string text = report_text(e);
  EXPECT_NE(text.find("classes: 1000 classes (0–999)"), std::string::npos) << text.substr(0, 3000);
  size_t longest = 0, start = 0;
  for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    if (text.compare(start, 10, "  classes:") == 0) longest = std::max(longest, end - start);
    start = end + 1;
  }
  EXPECT_LT(longest, 200u);
}

}  // namespace
}  // namespace shardlens

// Diagnosis from records and matrices alone: hand-built runs with no flags (as imports
// have), and every lesson preset.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/diagnosis/diagnosis.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/validations.h"

using namespace shardlens;

namespace {

// A run of `ranks` index lists over a dataset whose class is index % classes and whose
// predictions are perfect; matrices are the exact sums unless the test changes them.
struct HandRun {
  int32_t classes = 2;
  int64_t n = 0;
  StoredRecords records;
  std::vector<Matrix> per_rank;
  Matrix reported;

  HandRun(int64_t n_, const std::vector<std::vector<int64_t>>& ranks, int32_t c = 2)
      : classes(c), n(n_) {
    for (const auto& indices : ranks) {
      std::vector<Record> rows;
      Matrix m(classes);
      for (int64_t i : indices) {
        const auto t = static_cast<int32_t>(i % classes);
        rows.push_back({i, t, t, 0});
        m.at(t, t) += 1;
      }
      records.ranks.push_back(rows);
      per_rank.push_back(m);
    }
    reported = Matrix(classes);
    for (const Matrix& m : per_rank) reported += m;
  }

  Diagnosis run(std::optional<int64_t> batch = {}) const {
    DiagnosisInput in;
    in.records = &records;
    in.per_rank = &per_rank;
    in.reported = &reported;
    in.dataset_size = n;
    in.class_counts.assign(static_cast<size_t>(classes), 0);
    for (int64_t i = 0; i < n; ++i) ++in.class_counts[static_cast<size_t>(i % classes)];
    in.batch_size = batch;
    return diagnose(in);
  }
};

std::vector<std::string> patterns(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const Finding& f : d.findings) out.push_back(pattern_id(f.pattern));
  return out;
}

}  // namespace

TEST(Diagnosis, ExactCoverageIsCorrect) {
  const Diagnosis d = HandRun(6, {{0, 2, 4}, {1, 3, 5}}).run();
  EXPECT_TRUE(d.correct);
  EXPECT_TRUE(d.findings.empty());
  EXPECT_TRUE(d.mismatched_rows.empty());
}

TEST(Diagnosis, TailDuplicatesWithoutFlagsArePadding) {
  // n=5, W=2: rank 1's last record repeats index 0.
  const Diagnosis d = HandRun(5, {{0, 2, 4}, {1, 3, 0}}).run();
  EXPECT_FALSE(d.correct);
  EXPECT_EQ(patterns(d), std::vector<std::string>{"padding-duplicates"});
  EXPECT_EQ(d.findings[0].samples, std::vector<int64_t>{0});
  EXPECT_EQ(d.mismatched_rows, std::vector<int32_t>{0});
}

TEST(Diagnosis, OverlapWithMissingSamples) {
  const Diagnosis d = HandRun(6, {{0, 1, 2}, {1, 2, 3}}).run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"rank-overlap"});
  EXPECT_EQ(d.missing_samples, 2);
  EXPECT_EQ(d.duplicated_samples, 2);
}

TEST(Diagnosis, EveryRankSeeingEverything) {
  HandRun run(4, {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}});
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"no-distributed-sampler"});
}

TEST(Diagnosis, WithinRankRepeatsAreASanityLeak) {
  EXPECT_EQ(patterns(HandRun(4, {{0, 2, 0, 2}, {1, 3, 1, 3}}).run()),
            std::vector<std::string>{"sanity-leak"});
}

TEST(Diagnosis, MissingTailIsSamplerDropLast) {
  // n=7, W=2, drop_last: 3 each, index 6 never evaluated.
  EXPECT_EQ(patterns(HandRun(7, {{0, 2, 4}, {1, 3, 5}}).run()),
            std::vector<std::string>{"sampler-drop-last"});
}

TEST(Diagnosis, WholeBatchesOnlyIsLoaderDropLast) {
  // n=10, W=2, B=4: 5 per rank, one batch of 4 kept.
  HandRun run(10, {{0, 2, 4, 6}, {1, 3, 5, 7}});
  const Diagnosis d = run.run(4);
  EXPECT_EQ(patterns(d), std::vector<std::string>{"loader-drop-last"});
  // The same records come from limit_val_batches=1: the finding says so.
  EXPECT_NE(d.findings[0].explanation.find("A batch limit of 1 batch(es) would cut the same"),
            std::string::npos)
      << d.findings[0].explanation;
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"batch-limit-subset"});
}

TEST(Diagnosis, SamplerDropLastNamesTheLimitItMatches) {
  HandRun run(7, {{0, 2, 4}, {1, 3, 5}});
  const std::string with_b3 = run.run(3).findings.at(0).explanation;
  EXPECT_NE(with_b3.find("A batch limit of 1 batch(es)"), std::string::npos) << with_b3;
  // Batches of 2 cannot stop at 3 samples: no such limit exists.
  EXPECT_EQ(run.run(2).findings.at(0).explanation.find("batch limit"), std::string::npos);
}

TEST(Diagnosis, ShuffledSubsetAddsShuffledEval) {
  // 16 of 20 evaluated, each rank's order shuffled (more than a wrap-around's descent).
  const std::vector<int64_t> a = {17, 3, 9, 11, 1, 15, 7, 19};
  const std::vector<int64_t> b = {0, 8, 4, 12, 16, 2, 10, 6};
  const auto p = patterns(HandRun(20, {a, b}).run());
  EXPECT_NE(std::find(p.begin(), p.end(), "batch-limit-subset"), p.end());
  EXPECT_NE(std::find(p.begin(), p.end(), "shuffled-eval"), p.end());
}

TEST(Diagnosis, ReductionPatterns) {
  HandRun run(6, {{0, 2, 4}, {1, 3, 5}});
  run.reported = run.reported.scaled(2);
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"double-sync"});
  run.reported = run.per_rank[1];
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"unsynced"});
  run.reported = normalize(run.per_rank[0], Normalization::True);
  run.reported += normalize(run.per_rank[1], Normalization::True);
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"normalize-then-sum"});
}

TEST(Diagnosis, ZeroPairsMatchingUnevenRanksAreGatherPadding) {
  HandRun run(5, {{0, 2, 4}, {1, 3}});
  run.reported.at(0, 0) += 1;
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"gather-zero-pad"});
  run.reported.at(0, 0) += 1;  // more zeros than the padding explains
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"unexplained-difference"});
}

TEST(Diagnosis, StalledCellsAreCounterPrecision) {
  HandRun run(6, {{0, 2, 4}, {1, 3, 5}});
  run.per_rank[0].at(0, 0) = 2;  // rank 0 saw three of class 0 but holds two
  run.reported = run.per_rank[0];
  run.reported += run.per_rank[1];
  const Diagnosis d = run.run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"counter-precision"});
  EXPECT_EQ(d.findings[0].classes, std::vector<int32_t>{0});
}

TEST(Diagnosis, EmptiedRowIsIgnoredTargets) {
  HandRun run(6, {{0, 2, 4}, {1, 3, 5}});
  run.per_rank[0].at(1, 1) = run.per_rank[1].at(1, 1) = 0;
  run.reported = run.per_rank[0];
  run.reported += run.per_rank[1];
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"ignored-targets"});
}

TEST(Diagnosis, EveryPatternHasTextAndFixes) {
  for (Pattern p : all_patterns()) {
    const std::string id = pattern_id(p);
    EXPECT_EQ(pattern_from_id(id), p);
    const Finding f = describe_pattern(p);
    EXPECT_FALSE(f.title.empty()) << id;
    EXPECT_FALSE(f.explanation.empty()) << id;
    EXPECT_FALSE(f.fixes.empty()) << id;
  }
}

// Every lesson shows the pitfall it is named after, from the records alone.
TEST(Lessons, EachLessonIsDiagnosedAsItsPattern) {
  const LessonList all = load_lessons();
  for (const std::string& error : all.errors) ADD_FAILURE() << error;
  const auto& lessons = all.lessons;
  ASSERT_GE(lessons.size(), 16u);
  EXPECT_EQ(lessons.front().name, "seed-lesson");
  for (const LessonInfo& lesson : lessons) {
    // Several validations per epoch: the last one (each is its own evaluation).
    const Evaluation e = simulate_validations(lesson.scenario).back();
    EXPECT_FALSE(e.diagnosis.correct) << lesson.name;
    const auto p = patterns(e.diagnosis);
    const std::string want = lesson.name == "seed-lesson" ? "shuffled-eval" : lesson.name;
    EXPECT_NE(std::find(p.begin(), p.end(), want), p.end()) << lesson.name;
    EXPECT_EQ(std::find(p.begin(), p.end(), "unexplained-difference"), p.end()) << lesson.name;
    EXPECT_FALSE(lesson.scenario.description.empty()) << lesson.name;
  }
}

TEST(Lessons, UnknownPresetNamesTheAvailableOnes) {
  try {
    load_preset("no-such-lesson");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("padding-duplicates"), std::string::npos);
  }
}

// Diagnosis from records and matrices alone: hand-built runs with no flags (as imports
// have), and every lesson preset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/facts_json.h"
#include "core/diagnosis/precision.h"
#include "core/report/metrics.h"
#include "core/report/verdict.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/validations.h"
#include "tests/common/test_rows.h"
#include "tests/core/pattern_rows.h"

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

  // The class of index i: i % classes, unless `first_of_class_1` splits the indices into
  // [0, first) of class 0 and the rest of class 1.
  int64_t first_of_class_1 = -1;
  int32_t class_of(int64_t i) const {
    if (first_of_class_1 >= 0) return i < first_of_class_1 ? 0 : 1;
    return static_cast<int32_t>(i % classes);
  }

  HandRun(int64_t n_, const std::vector<std::vector<int64_t>>& ranks, int32_t c = 2,
          int64_t split = -1)
      : classes(c), n(n_), first_of_class_1(split) {
    for (const auto& indices : ranks) {
      std::vector<Record> rows;
      Matrix m(classes);
      for (int64_t i : indices) {
        const auto t = class_of(i);
        rows.push_back({i, t, t, 0});
        m.at(t, t) += 1;
      }
      records.ranks.push_back(rows);
      per_rank.push_back(m);
    }
    reported = Matrix(classes);
    for (const Matrix& m : per_rank) reported += m;
  }

  Diagnosis run(std::optional<int64_t> batch = {}, std::optional<bool> limited = {},
                std::optional<bool> reshuffled = {},
                std::optional<bool> loader_drop_last = {}) const {
    DiagnosisInput in;
    in.batch_limited = limited;
    in.loader_drop_last = loader_drop_last;
    in.reshuffled_each_epoch = reshuffled;
    in.records = &records;
    in.per_rank = &per_rank;
    in.reported = &reported;
    in.dataset_size = n;
    in.class_counts.assign(static_cast<size_t>(classes), 0);
    for (int64_t i = 0; i < n; ++i) ++in.class_counts[static_cast<size_t>(class_of(i))];
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
  const std::string text = describe(d.findings[0]).explanation;
  EXPECT_NE(text.find("A batch limit of 1 batch(es) would cut the same"), std::string::npos)
      << text;
  // Without the batch size the same records prove no cause: no limit is asserted.
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"never-evaluated"});
}

// Dumps imported without settings: samples missing, nothing to say which setting cut them.
// The finding names every cause the records are consistent with and never asserts a limit.
TEST(Diagnosis, MissingSamplesWithoutSettingsNameEveryPossibleCause) {
  // n=10 on 2 ranks, each stopped after 4: indices 8 and 9 never evaluated.
  HandRun run(10, {{0, 2, 4, 6}, {1, 3, 5, 7}});
  const Diagnosis d = run.run();
  ASSERT_EQ(patterns(d), std::vector<std::string>{"never-evaluated"});
  EXPECT_EQ(d.findings[0].sample_count, 2);
  const FindingText text = describe(d.findings[0]);
  EXPECT_NE(text.title.find("never evaluated"), std::string::npos) << text.title;
  EXPECT_EQ(text.title.find("Batch limit"), std::string::npos) << text.title;
  EXPECT_NE(text.explanation.find("2 samples never evaluated (of 10): consistent with a "
                                  "batch limit, the loader's drop_last or a subset"),
            std::string::npos)
      << text.explanation;
  // The evidence the records hold: where the missing samples lie, and what would decide.
  EXPECT_NE(text.explanation.find("Every rank evaluated 4 samples."), std::string::npos)
      << text.explanation;
  EXPECT_NE(text.explanation.find("last indices (8-9)"), std::string::npos) << text.explanation;
  bool names_recorder = false;
  for (const Fix& f : text.fixes) names_recorder |= f.text.find("recorder") != std::string::npos;
  EXPECT_TRUE(names_recorder);

  // Settings that tell of a limit make it the cause; settings that rule one out drop it.
  EXPECT_EQ(patterns(run.run({}, true)), std::vector<std::string>{"batch-limit-subset"});
  const Diagnosis no_limit = run.run({}, false);
  ASSERT_EQ(patterns(no_limit), std::vector<std::string>{"never-evaluated"});
  const std::string unlimited = describe(no_limit.findings[0]).explanation;
  EXPECT_NE(unlimited.find("consistent with the loader's drop_last or a subset"), std::string::npos)
      << unlimited;
  EXPECT_EQ(unlimited.find("consistent with a batch limit"), std::string::npos) << unlimited;
}

// Settings that say the loader kept its last batch rule drop_last out of the causes, and with
// no limit either only a subset is left; the fixes then point at the ids, not at either.
TEST(Diagnosis, MissingSamplesNameNoCauseTheSettingsRuleOut) {
  HandRun run(10, {{0, 2, 4, 6}, {1, 3, 5, 7}});
  const FindingText kept = describe(run.run({}, {}, {}, false).findings.at(0));
  EXPECT_NE(kept.explanation.find("consistent with a batch limit or a subset of the dataset."),
            std::string::npos)
      << kept.explanation;
  EXPECT_EQ(kept.explanation.find("drop_last"), std::string::npos) << kept.explanation;
  EXPECT_NE(kept.explanation.find("as a batch limit does."), std::string::npos) << kept.explanation;

  const Diagnosis neither = run.run({}, false, {}, false);
  ASSERT_EQ(patterns(neither), std::vector<std::string>{"never-evaluated"});
  const FindingText subset = describe(neither.findings.at(0));
  EXPECT_NE(subset.explanation.find("2 samples never evaluated (of 10): consistent with a subset "
                                    "of the dataset."),
            std::string::npos)
      << subset.explanation;
  EXPECT_EQ(subset.explanation.find("drop_last"), std::string::npos) << subset.explanation;
  EXPECT_EQ(subset.explanation.find("batch limit"), std::string::npos) << subset.explanation;
  EXPECT_NE(subset.explanation.find("stopped before the end of its share."), std::string::npos)
      << subset.explanation;
  for (const Fix& f : subset.fixes) {
    if (f.framework == "ShardLens") {
      EXPECT_EQ(f.text.find("points to the loader's drop_last"), std::string::npos) << f.text;
    }
  }

  // Settings that say the loader did drop its last batch leave drop_last among the causes.
  const std::string dropped = describe(run.run({}, false, {}, true).findings.at(0)).explanation;
  EXPECT_NE(dropped.find("consistent with the loader's drop_last or a subset"), std::string::npos)
      << dropped;
}

TEST(Diagnosis, MissingSamplesSpreadOverTheDatasetAreNotTheLastIndices) {
  // 6 and 7 missing, 8 and 9 evaluated: no trailing block.
  const Diagnosis d = HandRun(10, {{0, 2, 4, 8}, {1, 3, 5, 9}}).run();
  ASSERT_EQ(patterns(d), std::vector<std::string>{"never-evaluated"});
  const std::string text = describe(d.findings[0]).explanation;
  EXPECT_NE(text.find("not the dataset's last indices"), std::string::npos) << text;
  EXPECT_EQ(text.find("last indices ("), std::string::npos) << text;
}

TEST(Diagnosis, SamplerDropLastNamesTheLimitItMatches) {
  HandRun run(7, {{0, 2, 4}, {1, 3, 5}});
  const std::string with_b3 = describe(run.run(3).findings.at(0)).explanation;
  EXPECT_NE(with_b3.find("A batch limit of 1 batch(es)"), std::string::npos) << with_b3;
  // Batches of 2 cannot stop at 3 samples: no such limit exists.
  EXPECT_EQ(describe(run.run(2).findings.at(0)).explanation.find("batch limit"), std::string::npos);
}

TEST(Diagnosis, ShuffledSubsetAddsShuffledEval) {
  // 16 of 20 evaluated, each rank's order shuffled (more than a wrap-around's descent).
  const std::vector<int64_t> a = {17, 3, 9, 11, 1, 15, 7, 19};
  const std::vector<int64_t> b = {0, 8, 4, 12, 16, 2, 10, 6};
  const auto p = patterns(HandRun(20, {a, b}).run());
  EXPECT_NE(std::find(p.begin(), p.end(), "never-evaluated"), p.end());
  EXPECT_NE(std::find(p.begin(), p.end(), "shuffled-eval"), p.end());
}

// One evaluation shows one order: the shuffled-order finding claims a change every epoch
// only where the sampler is known to reshuffle (a simulation's), never for one import.
TEST(Diagnosis, OneEvaluationMakesNoPerEpochClaim) {
  const std::vector<int64_t> a = {17, 3, 9, 11, 1, 15, 7, 19};
  const std::vector<int64_t> b = {0, 8, 4, 12, 16, 2, 10, 6};
  const HandRun run(20, {a, b});
  const auto shuffled_words = [](const Diagnosis& d) {
    for (const Finding& f : d.findings)
      if (f.pattern == Pattern::ShuffledEval) return describe(f).explanation;
    return std::string("(no shuffled-eval finding)");
  };
  const std::string one = shuffled_words(run.run());
  EXPECT_NE(one.find("shuffled"), std::string::npos) << one;
  EXPECT_EQ(one.find("change every epoch"), std::string::npos) << one;
  EXPECT_EQ(one.find("set_epoch changes the order every epoch"), std::string::npos) << one;
  EXPECT_EQ(one.find("changes from epoch to epoch"), std::string::npos) << one;
  const std::string known = shuffled_words(run.run({}, {}, true));
  EXPECT_NE(known.find("change every epoch"), std::string::npos) << known;
}

// A finding's numbers and clauses are the evaluation's own. Each pattern's words
// on two scenarios that differ.
const Finding& finding_of(const Diagnosis& d, Pattern p) {
  for (const Finding& f : d.findings)
    if (f.pattern == p) return f;
  throw std::runtime_error(std::string("no finding ") + pattern_id(p));
}

std::string fixes_text(const Finding& f) {
  std::string out;
  for (const Fix& x : describe(f).fixes) out += x.text + "\n";
  return out;
}

TEST(Diagnosis, SamplerDropLastFixPadsThisDataset) {
  // n=7 on 2 ranks and n=11 on 3: drop_last=False would pad to 8 and to 12, not 512.
  const Diagnosis seven = HandRun(7, {{0, 2, 4}, {1, 3, 5}}).run();
  const Diagnosis eleven = HandRun(11, {{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}).run();
  const std::string a = fixes_text(finding_of(seven, Pattern::SamplerDropLast));
  const std::string b = fixes_text(finding_of(eleven, Pattern::SamplerDropLast));
  EXPECT_NE(a.find("(7 samples become 8 on 2 ranks)"), std::string::npos) << a;
  EXPECT_NE(b.find("(11 samples become 12 on 3 ranks)"), std::string::npos) << b;
  EXPECT_EQ(a.find("510"), std::string::npos) << a;
  EXPECT_NE(describe(finding_of(eleven, Pattern::SamplerDropLast))
                .explanation.find("2 samples were never evaluated (of 11)"),
            std::string::npos);
}

TEST(Diagnosis, ShuffledEvalNamesWhatTheOrderDecides) {
  // A shuffled subset: the order decides which samples are left out.
  const std::vector<int64_t> a = {17, 3, 9, 11, 1, 15, 7, 19};
  const std::vector<int64_t> b = {0, 8, 4, 12, 16, 2, 10, 6};
  // (A sampler known to reshuffle every epoch: the order's change is claimed.)
  const std::string cut =
      describe(finding_of(HandRun(20, {a, b}).run({}, {}, true), Pattern::ShuffledEval))
          .explanation;
  EXPECT_NE(cut.find("which samples are left out changes"), std::string::npos) << cut;
  EXPECT_EQ(cut.find("padded"), std::string::npos) << cut;
  // Records alone: what the order decides, no change claimed.
  const std::string one =
      describe(finding_of(HandRun(20, {a, b}).run(), Pattern::ShuffledEval)).explanation;
  EXPECT_NE(one.find("it decides which samples are left out (here 4 samples left out of 20)."),
            std::string::npos)
      << one;
  EXPECT_EQ(one.find("The evaluation order is shuffled", 1), std::string::npos)
      << "said twice: " << one;
  // Every sample evaluated, 17 on 2 ranks with one padding record: no batch limit at all.
  const std::vector<int64_t> c = {16, 3, 9, 11, 1, 15, 7, 13, 5};
  const std::vector<int64_t> d = {0, 8, 4, 12, 14, 2, 10, 6, 16};
  const Diagnosis padded = HandRun(17, {c, d}).run({}, {}, true);
  EXPECT_EQ(padded.missing_samples, 0);
  const std::string pad = describe(finding_of(padded, Pattern::ShuffledEval)).explanation;
  EXPECT_NE(pad.find("which samples get padded changes"), std::string::npos) << pad;
  EXPECT_EQ(pad.find("batch limit"), std::string::npos) << pad;
  // Without facts the general words name no batch limit that nothing showed.
  const std::string general = describe_pattern(Pattern::ShuffledEval).explanation;
  EXPECT_NE(general.find("which samples are left out or padded"), std::string::npos) << general;
  EXPECT_EQ(general.find("batch limit"), std::string::npos) << general;
}

TEST(Diagnosis, CycledPaddingNamesThisDatasetsRounding) {
  auto plain_gather = [](int64_t n, int w) {
    Scenario s;
    s.dataset = "synthetic:counts=" + std::to_string(n / 2) + "," + std::to_string(n - n / 2);
    s.sampler.kind = SamplerKind::Accelerate;
    s.sampler.world_size = w;
    s.loader.batch_size = 4;
    s.sync = SyncStrategy::Gather;
    const Evaluation e = simulate(s);
    return describe(finding_of(e.diagnosis, Pattern::PlainGatherPadding)).explanation;
  };
  const std::string a = plain_gather(30, 4);  // 2 rounds of 16: 32
  const std::string b = plain_gather(50, 2);  // 7 rounds of 8: 56
  EXPECT_NE(a.find("(30 samples counted as 32 on 4 ranks)"), std::string::npos) << a;
  EXPECT_NE(b.find("(50 samples counted as 56 on 2 ranks)"), std::string::npos) << b;
  EXPECT_EQ(a.find("25,600"), std::string::npos) << a;
}

TEST(Diagnosis, DoubleShardNamesThisRunsShare) {
  Scenario s = load_preset("accelerate-double-shard");  // 510 samples, 4 ranks, batches of 16
  const std::string four =
      describe(finding_of(simulate(s).diagnosis, Pattern::AccelerateDoubleShard)).explanation;
  EXPECT_NE(four.find("(128 of 510 samples on 4 ranks with batches of 16)"), std::string::npos)
      << four;
  s.sampler.world_size = 2;
  const std::string two =
      describe(finding_of(simulate(s).diagnosis, Pattern::AccelerateDoubleShard)).explanation;
  EXPECT_NE(two.find(" of 510 samples on 2 ranks with batches of 16)"), std::string::npos) << two;
  EXPECT_EQ(two.find("128 of 510"), std::string::npos) << two;
}

TEST(Diagnosis, FactsAreTheMeasuredNumbers) {
  const Diagnosis d = HandRun(7, {{0, 2, 4}, {1, 3, 5}}).run(3);
  const Facts& f = finding_of(d, Pattern::SamplerDropLast).facts;
  EXPECT_EQ(f.dataset_size, 7);
  EXPECT_EQ(f.world_size, 2);
  EXPECT_EQ(f.missing, 1);
  EXPECT_EQ(f.limit_batches, 1);  // 3 records per rank: one batch of 3
  // The JSON report's "facts" of the finding: the measured ones, by name.
  EXPECT_EQ(facts_json(f),
            nlohmann::json(
                {{"dataset_size", 7}, {"world_size", 2}, {"missing", 1}, {"limit_batches", 1}}));
  EXPECT_FALSE(HandRun(7, {{0, 2, 4}, {1, 3, 5}}).run(2).findings.at(0).facts.limit_batches);
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

// One rank holding `records` samples of class 0 (predicted 0) and 5 of class 1, whose
// counter shows `counted` in cell (0, 0).
HandRun one_rank_counting(int64_t records, double counted) {
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < records + 5; ++i) indices.push_back(i);
  HandRun run(records + 5, {indices}, 2, records);
  run.per_rank[0].at(0, 0) = counted;
  run.reported = run.per_rank[0];
  return run;
}

std::string explanation_of(const Diagnosis& d, const std::string& pattern) {
  for (const Finding& f : d.findings)
    if (pattern_id(f.pattern) == pattern) return describe(f).explanation;
  return "";
}

TEST(Diagnosis, ACellRoundedUpPastFloat16sRangeIsCounterPrecision) {
  // 4501 is not a float16 number (integers are 4 apart in [4096, 8192)); 4504 is.
  const Diagnosis d = one_rank_counting(4501, 4504).run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"counter-precision"});
  EXPECT_EQ(d.findings[0].classes, std::vector<int32_t>{0});
  const std::string text = explanation_of(d, "counter-precision");
  EXPECT_NE(text.find("1 too high, 0 too low"), std::string::npos) << text;
  EXPECT_NE(text.find("float16"), std::string::npos) << text;
  EXPECT_NE(text.find("4 apart at 4504"), std::string::npos) << text;
}

TEST(Diagnosis, ACellRoundedDownPastFloat16sRangeIsCounterPrecision) {
  const Diagnosis d = one_rank_counting(4503, 4500).run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"counter-precision"});
  const std::string text = explanation_of(d, "counter-precision");
  EXPECT_NE(text.find("0 too high, 1 too low"), std::string::npos) << text;
  EXPECT_NE(text.find("float16"), std::string::npos) << text;
}

TEST(Diagnosis, BFloat16SpacingIsNamedWhereFloat16WouldBeExact) {
  // 1008 is a bfloat16 number (4 apart in [512, 1024)); float16 holds 1000 exactly.
  const Diagnosis d = one_rank_counting(1000, 1008).run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"counter-precision"});
  EXPECT_NE(explanation_of(d, "counter-precision").find("bfloat16"), std::string::npos);
}

// Below 2048 float16 is exact, and 4503 is no float16 or bfloat16 number: a counter did not
// round these, something else changed them.
namespace {

struct NoFloatCase {
  std::string name;
  double records;
  double counted;
};

void PrintTo(const NoFloatCase& c, std::ostream* os) {
  *os << c.name;
}

}  // namespace

class CountsNoFloatHolds : public testing::TestWithParam<NoFloatCase> {};

TEST_P(CountsNoFloatHolds, AreNotBlamedOnPrecision) {
  const auto& [name, records, counted] = GetParam();
  const Diagnosis d = one_rank_counting(int64_t(records), counted).run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"unexplained-difference"}) << counted;
  EXPECT_EQ(d.findings[0].classes, std::vector<int32_t>{0});
  EXPECT_NE(explanation_of(d, "unexplained-difference").find("no float"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Diagnosis, CountsNoFloatHolds,
                         testing::Values(NoFloatCase{"ThreeCountedAsTwo", 3.0, 2.0},
                                         NoFloatCase{"Records4501CountedAs4503", 4501.0, 4503.0}),
                         test::NamedRow{});

// Two ranks of 3003 records count exactly (1501 + 1502 in each diagonal cell); the float16 sum
// 3003 lies between 3002 and 3004, so a float16 all_reduce reports either, never 3003.
namespace {

struct AllReduceCase {
  std::string name;
  double reported;
};

void PrintTo(const AllReduceCase& c, std::ostream* os) {
  *os << c.name;
}

}  // namespace

class AFloat16AllReduceThatRounds : public testing::TestWithParam<AllReduceCase> {};

TEST_P(AFloat16AllReduceThatRounds, IsCounterPrecision) {
  const double reported = GetParam().reported;
  std::vector<int64_t> a, b;
  for (int64_t i = 0; i <= 3000; i += 2) a.push_back(i);     // 1501 of class 0
  for (int64_t i = 1; i <= 3003; i += 2) a.push_back(i);     // 1502 of class 1
  for (int64_t i = 3002; i <= 6004; i += 2) b.push_back(i);  // 1502 of class 0
  for (int64_t i = 3005; i <= 6005; i += 2) b.push_back(i);  // 1501 of class 1
  HandRun run(6006, {a, b});
  ASSERT_EQ(run.reported.at(0, 0), 3003);
  run.reported.at(0, 0) = reported;
  run.reported.at(1, 1) = 3004;
  const Diagnosis d = run.run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"counter-precision"}) << reported;
  const std::string text = explanation_of(d, "counter-precision");
  EXPECT_NE(text.find("synced matrix"), std::string::npos) << text;
  EXPECT_NE(text.find("float16"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Diagnosis, AFloat16AllReduceThatRounds,
                         testing::Values(AllReduceCase{"RoundedUpTo3004", 3004.0},
                                         AllReduceCase{"RoundedDownTo3002", 3002.0}),
                         test::NamedRow{});

TEST(Diagnosis, ARankMissingFromOrAddedTwiceToTheSumIsNamed) {
  // Three ranks of two samples each; the reported matrix drops rank 1 (too low), or adds it
  // again (too high).
  HandRun run(6, {{0, 3}, {1, 4}, {2, 5}}, 3);  // each rank holds one class
  Matrix without = run.per_rank[0];
  without += run.per_rank[2];
  Matrix twice = run.reported;
  twice += run.per_rank[1];
  run.reported = without;
  Diagnosis d = run.run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"unsynced"});
  EXPECT_NE(explanation_of(d, "unsynced").find("every rank but rank 1"), std::string::npos);
  run.reported = twice;
  d = run.run();
  EXPECT_EQ(patterns(d), std::vector<std::string>{"double-sync"});
  EXPECT_NE(explanation_of(d, "double-sync").find("rank 1's counts added a second time"),
            std::string::npos);
}

TEST(Diagnosis, FloatSpacingFollowsEachFormat) {
  using detail::dtype_spacing;
  EXPECT_EQ(dtype_spacing(2047, CounterDtype::Float16), 1);
  EXPECT_EQ(dtype_spacing(2048, CounterDtype::Float16), 2);
  EXPECT_EQ(dtype_spacing(9000, CounterDtype::Float16), 8);
  EXPECT_EQ(dtype_spacing(300, CounterDtype::BFloat16), 2);
  EXPECT_EQ(dtype_spacing(16777216, CounterDtype::Float32), 2);
  // A float32 all_reduce past 2^24: 16777217 is no float32 number, 16777218 is.
  Matrix observed(1);
  observed.cells[0] = 16777218;
  const auto d = detail::explaining_dtype({&observed}, {{-1, 0, 0, 16777218, 16777217}}, 1);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, CounterDtype::Float32);
}

TEST(Diagnosis, AFloat16RowAboveItsCountIsCounterPrecisionNotUnexplained) {
  // diagnose --dataset synthetic:counts=9000,10 --world-size 2 --batch-size 64
  //          --counter-dtype float16: row 0 comes out above 9000.
  Scenario s;
  s.dataset = "synthetic:counts=9000,10";
  s.sampler.world_size = 2;
  s.loader.batch_size = 64;
  s.dtype = CounterDtype::Float16;
  const Evaluation e = simulate(s);
  EXPECT_GT(e.synced->row_sums()[0], 9000);
  EXPECT_EQ(patterns(e.diagnosis), std::vector<std::string>{"counter-precision"});
  EXPECT_NE(explanation_of(e.diagnosis, "counter-precision").find("float16"), std::string::npos);
}

TEST(Diagnosis, EmptiedRowIsIgnoredTargets) {
  HandRun run(6, {{0, 2, 4}, {1, 3, 5}});
  run.per_rank[0].at(1, 1) = run.per_rank[1].at(1, 1) = 0;
  run.reported = run.per_rank[0];
  run.reported += run.per_rank[1];
  EXPECT_EQ(patterns(run.run()), std::vector<std::string>{"ignored-targets"});
}

class EveryPattern : public testing::TestWithParam<PatternRow> {};

TEST_P(EveryPattern, HasTextAndFixes) {
  const Pattern p = GetParam().pattern;
  const std::string id = pattern_id(p);
  EXPECT_EQ(pattern_from_id(id), p);
  const FindingText f = describe_pattern(p);
  EXPECT_FALSE(f.title.empty()) << id;
  EXPECT_FALSE(f.explanation.empty()) << id;
  EXPECT_FALSE(f.fixes.empty()) << id;
}

INSTANTIATE_TEST_SUITE_P(Diagnosis, EveryPattern, testing::ValuesIn(pattern_rows()),
                         test::NamedRow{});

namespace {

// The lesson whose matrix is right and whose point is the accuracy Lightning logs.
constexpr const char* kMetricLesson = "logged-accuracy-mean";
// The lesson whose matrix is right and whose point is the mean of the ranks' mIoUs.
constexpr const char* kRankMeanLesson = "ade20k-rank-mean-miou";

// The pattern a lesson claims: the one it is named after, or, for the lessons taken from
// public reports, the pattern their text names.
std::string lesson_pattern(const std::string& name) {
  if (name == "seed-lesson") return "shuffled-eval";
  if (name == "sorted-val-limit") return "batch-limit-subset";
  if (name == "mnist-padding-3-gpus") return "padding-duplicates";
  if (name == kMetricLesson) return "logged-accuracy";    // a right matrix, a wrong logged value
  if (name == kRankMeanLesson) return "logged-accuracy";  // the same, of the mIoU
  if (name == "voc-padding-miou") return "padding-duplicates";
  if (name == "ade20k-batch-limit") return "batch-limit-subset";
  if (name == "voc-unsynced") return "unsynced";
  if (name == "conll-plain-gather") return "plain-gather-padding";
  return name;
}

const LessonInfo& find_lesson(const std::vector<LessonInfo>& all, const std::string& name) {
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const LessonInfo& l) { return l.name == name; });
  if (it == all.end()) throw std::runtime_error("no lesson " + name);
  return *it;
}

int64_t total(const Matrix& m) {
  double t = 0;
  for (double v : m.cells) t += v;
  return static_cast<int64_t>(t);
}

}  // namespace

// The lessons load, without errors, seed-lesson first.
TEST(Lessons, AllLessonsLoad) {
  const LessonList all = load_lessons();
  for (const std::string& error : all.errors) ADD_FAILURE() << error;
  ASSERT_GE(all.lessons.size(), 16u);
  EXPECT_EQ(all.lessons.front().name, "seed-lesson");
}

namespace {

// One row per lesson, named by the lesson.
struct LessonRow {
  std::string name;
  LessonInfo lesson;
};

void PrintTo(const LessonRow& r, std::ostream* os) {
  *os << r.name;
}

std::vector<LessonRow> lesson_rows() {
  std::vector<LessonRow> rows;
  for (const LessonInfo& lesson : load_lessons().lessons) rows.push_back({lesson.name, lesson});
  return rows;
}

}  // namespace

class EachLesson : public testing::TestWithParam<LessonRow> {};

// Every lesson shows the pitfall it is named after, from the records alone.
TEST_P(EachLesson, IsDiagnosedAsItsPattern) {
  const LessonInfo& lesson = GetParam().lesson;
  // Several validations per epoch: the last one (each is its own evaluation).
  const Evaluation e = simulate_validations(lesson.scenario).back();
  const std::string want = lesson_pattern(lesson.name);
  if (lesson.name == kMetricLesson) {
    // The matrix is right; the mean of the ranks' accuracies (what self.log with sync_dist
    // averages) is not the accuracy: 1/3, 2/3, 2/2 and 1/2 of 3, 3, 2, 2 samples. Both
    // values the lesson logs are findings, and nothing about the matrix is.
    EXPECT_TRUE(e.diagnosis.mismatched_rows.empty()) << lesson.name;
    EXPECT_EQ(*e.synced, *e.expected);
    EXPECT_FALSE(e.diagnosis.correct) << lesson.name;
    EXPECT_EQ(patterns(e.diagnosis),
              (std::vector<std::string>{"logged-accuracy", "logged-accuracy"}));
    const std::string epoch_words = describe(e.diagnosis.findings.at(0)).explanation;
    EXPECT_NE(epoch_words.find("averages to 0.6250, where the accuracy is 0.6000"),
              std::string::npos)
        << epoch_words;
    EXPECT_NE(epoch_words.find("3, 3, 2, 2 samples"), std::string::npos) << epoch_words;
    const std::string batch_words = describe(e.diagnosis.findings.at(1)).explanation;
    EXPECT_NE(batch_words.find("0.7500, where the accuracy is 0.6000"), std::string::npos)
        << batch_words;
    ASSERT_TRUE(rank_mean_accuracy(e).has_value());
    EXPECT_NEAR(*rank_mean_accuracy(e), (1.0 / 3 + 2.0 / 3 + 1.0 + 0.5) / 4, 1e-12);
    EXPECT_NEAR(compute_metrics(*e.expected).accuracy, 0.6, 1e-12);
    // Per batch: 6 hits / 4 ranks over 10 records / 4 ranks truncated to 2, as Lightning's
    // int64 batch-size total is.
    ASSERT_TRUE(batch_logged_accuracy(e).has_value());
    EXPECT_NEAR(*batch_logged_accuracy(e), (6.0 / 4) / 2, 1e-12);
    EXPECT_FALSE(lesson.scenario.description.empty()) << lesson.name;
    return;
  }
  EXPECT_FALSE(e.diagnosis.correct) << lesson.name;
  const auto p = patterns(e.diagnosis);
  EXPECT_NE(std::find(p.begin(), p.end(), want), p.end()) << lesson.name;
  EXPECT_EQ(std::find(p.begin(), p.end(), "unexplained-difference"), p.end()) << lesson.name;
  EXPECT_FALSE(lesson.scenario.description.empty()) << lesson.name;
}

// Each lesson opens with one sentence on what to look for in the views.
TEST_P(EachLesson, SaysFirstWhatToLookFor) {
  const LessonInfo& lesson = GetParam().lesson;
  const std::string& text = lesson.scenario.description;
  EXPECT_EQ(text.rfind("Look for: ", 0), 0u) << lesson.name;
  const size_t end = text.find(". ");
  ASSERT_NE(end, std::string::npos) << lesson.name;
  // One sentence: no sentence break inside it ("e.g." aside, none is used there).
  EXPECT_EQ(text.substr(0, end).find(". "), std::string::npos) << lesson.name;
  EXPECT_LT(end, 200u) << lesson.name << ": the first sentence is too long to read at a glance";
}

INSTANTIATE_TEST_SUITE_P(Lessons, EachLesson, testing::ValuesIn(lesson_rows()), test::NamedRow{});

// 16-mixed does not make torchmetrics' counters float16: the seed lesson counts in int64,
// and its rows are wrong for the batch limit and the shuffle alone.
TEST(Lessons, SeedLessonCountsInInt64) {
  const auto all = load_lessons().lessons;
  const LessonInfo& seed = find_lesson(all, "seed-lesson");
  EXPECT_EQ(seed.scenario.dtype, CounterDtype::Int64);
  const Evaluation e = simulate(seed.scenario);
  const auto p = patterns(e.diagnosis);
  EXPECT_EQ(std::find(p.begin(), p.end(), "counter-precision"), p.end());
  // 4 ranks x 10 batches of 10.
  EXPECT_EQ(total(*e.synced), 400);
}

// The lessons from public reports reproduce the numbers their text quotes.
TEST(Lessons, ReportedCasesGiveTheirNumbers) {
  const auto all = load_lessons().lessons;
  {
    // MNIST's 10,000 test images on 3 GPUs: DistributedSampler pads to ceil(10000 / 3) * 3.
    const Evaluation e = simulate(find_lesson(all, "mnist-padding-3-gpus").scenario);
    EXPECT_EQ(e.meta.dataset_size, 10000);
    EXPECT_EQ(total(*e.synced), (10000 + 2) / 3 * 3);
    EXPECT_EQ(total(*e.synced), 10002);
  }
  {
    // Several validations per epoch (Lightning 17843): 4 ranks x 3 batches x 10 of 500
    // samples, the same subset whenever the epoch is the same, another one the next epoch.
    Scenario s = find_lesson(all, "repeated-validation-subset").scenario;
    const Evaluation first = simulate(s);
    const Evaluation again = simulate(s);
    s.sampler.epoch += 1;
    const Evaluation next = simulate(s);
    EXPECT_EQ(total(*first.synced), 4 * 3 * 10);
    EXPECT_EQ(first.times_evaluated, again.times_evaluated);
    EXPECT_NE(first.times_evaluated, next.times_evaluated);
  }
  {
    // Class-sorted, unshuffled, 5 batches of 16 on 4 ranks: the first 320 indices, i.e.
    // classes 0-5 whole (50 each), 20 of class 6, none of 7-9.
    const Evaluation e = simulate(find_lesson(all, "sorted-val-limit").scenario);
    const auto rows = e.synced->row_sums();
    EXPECT_EQ(total(*e.synced), 320);
    for (int c = 0; c < 6; ++c) EXPECT_EQ(rows[size_t(c)], 50) << c;
    EXPECT_EQ(rows[6], 20);
    for (int c = 7; c < 10; ++c) EXPECT_EQ(rows[size_t(c)], 0) << c;
  }
  {
    // Sampler drop_last: the lesson's own fix, drop_last=False, pads 510 to 512 instead.
    Scenario s = find_lesson(all, "sampler-drop-last").scenario;
    s.sampler.drop_last = false;
    const Evaluation e = simulate(s);
    EXPECT_EQ(total(*e.synced), 512);
    const auto p = patterns(e.diagnosis);
    EXPECT_NE(std::find(p.begin(), p.end(), "padding-duplicates"), p.end());
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

namespace {

// 19840 -> "19,840", as the lessons write counts.
std::string with_commas(int64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

// The counter-precision lesson quotes what its own simulation gives: the synced diagonal, the
// rank cell that rounded furthest below its count, and the synced cell the all_reduce rounded
// up; so its text says "round", not "stall".
TEST(Lessons, CounterPrecisionQuotesItsOwnSimulation) {
  const auto all = load_lessons().lessons;
  const LessonInfo& lesson = find_lesson(all, "counter-precision");
  const std::string& text = lesson.scenario.description;
  EXPECT_EQ(lesson.scenario.title.find("stall"), std::string::npos) << lesson.scenario.title;
  EXPECT_EQ(text.find("stall"), std::string::npos) << text;
  const Evaluation e = simulate(lesson.scenario);
  for (int32_t k = 0; k < 3; ++k)
    EXPECT_NE(text.find(with_commas(int64_t(e.synced->at(k, k)))), std::string::npos) << k;
  const Finding& f = finding_of(e.diagnosis, Pattern::CounterPrecision);
  ASSERT_EQ(f.facts.rounded.size(), 2u);
  const RoundedCells& ranks = f.facts.rounded[0];
  const RoundedCells& synced = f.facts.rounded[1];
  EXPECT_GT(synced.too_high, 0);  // it rounds up too, not only down
  EXPECT_NE(text.find(with_commas(int64_t(ranks.largest.observed)) + " of " +
                      with_commas(int64_t(ranks.largest.exact))),
            std::string::npos);
  EXPECT_NE(text.find(with_commas(int64_t(synced.largest.exact)) + " becomes " +
                      with_commas(int64_t(synced.largest.observed))),
            std::string::npos);
}

namespace {

// A segmentation matrix's mIoU written out here, as torchmetrics' MulticlassJaccardIndex
// (average="macro", no ignore_index) computes it: tp / (row + column - tp) of each class,
// averaged over the classes whose row or column holds a count.
double hand_miou(const Matrix& m) {
  double sum = 0;
  int present = 0;
  for (int32_t c = 0; c < m.classes; ++c) {
    double row = 0, column = 0;
    for (int32_t k = 0; k < m.classes; ++k) {
      row += m.at(c, k);
      column += m.at(k, c);
    }
    if (row + column == 0) continue;
    sum += m.at(c, c) / (row + column - m.at(c, c));
    ++present;
  }
  return sum / present;
}

std::string four_places(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", v);
  return text;
}

}  // namespace

// ade20k-rank-mean-miou logs the mean of its 8 ranks' own mIoUs: the matrix is right, the
// logged mIoU is not, and the finding names both values, the ranks' range and the fix.
TEST(LoggedMetric, RankMeanMiouOfTheAde20kLessonIsAFinding) {
  const LessonInfo lesson = find_lesson(load_lessons().lessons, kRankMeanLesson);
  ASSERT_EQ(lesson.scenario.logged_accuracy, LoggedAccuracy::RankMean);
  const Evaluation e = simulate_validations(lesson.scenario).back();
  EXPECT_EQ(*e.synced, *e.expected);
  EXPECT_TRUE(e.diagnosis.mismatched_rows.empty());
  EXPECT_FALSE(e.diagnosis.correct);
  ASSERT_EQ(patterns(e.diagnosis), std::vector<std::string>{"logged-accuracy"});

  std::vector<double> ranks;
  for (const Matrix& m : e.per_rank) ranks.push_back(hand_miou(m));
  ASSERT_EQ(ranks.size(), 8u);
  double mean = 0;
  for (double v : ranks) mean += v / double(ranks.size());
  const double truth = hand_miou(*e.expected);
  // The values the lesson's text quotes, measured with torchmetrics 1.9.
  EXPECT_NEAR(mean, 0.6469, 5e-5);
  EXPECT_NEAR(truth, 0.6456, 5e-5);

  const Finding& f = e.diagnosis.findings.front();
  EXPECT_EQ(f.facts.logged_metric, "mIoU");
  EXPECT_NEAR(*f.facts.logged_value, mean, 1e-12);
  EXPECT_NEAR(*f.facts.true_value, truth, 1e-12);
  const FindingText text = describe(f);
  EXPECT_EQ(text.title, "Logged mIoU is not the mIoU");
  EXPECT_NE(text.explanation.find("mIoU logged with sync_dist=True averages to " +
                                  four_places(mean) + ", where the mIoU is " + four_places(truth)),
            std::string::npos)
      << text.explanation;
  const auto [low, high] = std::minmax_element(ranks.begin(), ranks.end());
  EXPECT_NE(text.explanation.find("between " + four_places(*low) + " and " + four_places(*high)),
            std::string::npos)
      << text.explanation;
  bool names_the_synced_confmat = false;
  for (const Fix& fix : text.fixes)
    names_the_synced_confmat |= fix.text.find("MulticlassJaccardIndex") != std::string::npos ||
                                fix.text.find("all_reduce(confmat") != std::string::npos;
  EXPECT_TRUE(names_the_synced_confmat);

  const Verdict v = verdict_of(e);
  EXPECT_EQ(v.kind, VerdictKind::Wrong);
  EXPECT_NE(v.sentence.find("WRONG LOGGED VALUE"), std::string::npos) << v.sentence;
  EXPECT_NE(v.sentence.find("the mIoU the run logged"), std::string::npos) << v.sentence;
}

// A dense run that logs nothing of its own, or only per batch (which no record shows of an
// mIoU), has nothing logged to check: its right matrix is right.
TEST(LoggedMetric, DenseRunWithoutARankMeanHasNoLoggedFinding) {
  Scenario s = find_lesson(load_lessons().lessons, kRankMeanLesson).scenario;
  for (LoggedAccuracy logged : {LoggedAccuracy::None, LoggedAccuracy::PerBatch}) {
    s.logged_accuracy = logged;
    const Evaluation e = simulate_validations(s).back();
    EXPECT_TRUE(e.diagnosis.correct) << to_string(logged);
    EXPECT_TRUE(e.diagnosis.findings.empty()) << to_string(logged);
  }
}

// The mean of the values of the ranks that logged: equal weights, absent under two ranks.
TEST(LoggedMetric, RankMeanOfValues) {
  EXPECT_NEAR(*logged_rank_mean_of({0.5, 0.75, 1.0}), 0.75, 1e-15);
  EXPECT_FALSE(logged_rank_mean_of({0.5}).has_value());
  EXPECT_FALSE(logged_rank_mean_of({}).has_value());
}

// A finding's words state only what its evaluation shows. For every pattern the
// simulator produces, two scenarios that differ (dataset size, world size, batch size, a
// batch limit or none): each finding's title, explanation and fixes hold the numbers of its
// own scenario, computed here from the scenario's settings (or counted from its records where
// a draw decides them), none of the other scenario's, and no batch-limit clause without a
// limit. Patterns no simulation produces are worded from facts built here.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "core/diagnosis/diagnosis.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/validations.h"
#include "tests/common/test_rows.h"
#include "tests/core/pattern_rows.h"

using namespace shardlens;

namespace {

int64_t ceil_to(int64_t n, int64_t m) {
  return (n + m - 1) / m * m;
}

std::string full_text(const FindingText& t) {
  std::string out = t.title + "\n" + t.explanation + "\n";
  for (const Fix& f : t.fixes) out += f.framework + ": " + f.text + "\n";
  return out;
}

// Every run of digits of a text ("0.5" gives "0" and "5").
std::set<int64_t> numbers_in(const std::string& text) {
  std::set<int64_t> out;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    out.insert(std::stoll(text.substr(i, j - i)));
    i = j;
  }
  return out;
}

// Numbers a pattern's general words hold whatever the evaluation (API values such as
// limit_val_batches=1.0, a format's range): never taken as an evaluation's own.
std::set<int64_t> constants_of(Pattern p) {
  return numbers_in(full_text(describe_pattern(p)));
}

// What a scenario's finding must say.
struct Expect {
  Expect(std::vector<int64_t> n = {}, std::vector<std::string> p = {},
         std::vector<std::string> a = {})
      : numbers(std::move(n)), phrases(std::move(p)), absent(std::move(a)) {}
  std::vector<int64_t> numbers;      // each stated (as a number of its own)
  std::vector<std::string> phrases;  // each stated word for word
  std::vector<std::string> absent;   // none of these
};

struct Case {
  Scenario scenario;
  // Counted from the evaluation (settings alone decide most; a random draw decides some).
  std::function<Expect(const Evaluation&)> expect;
};

Case fixed(Scenario s, Expect e) {
  return {std::move(s), [e](const Evaluation&) { return e; }};
}

// `classes` classes of `per_class` samples (n = classes * per_class), or two classes of the
// given counts.
Scenario base(const std::string& dataset, int w, int64_t b) {
  Scenario s;
  s.dataset = dataset;
  s.predictor = "noisy:accuracy=0.9,seed=1";
  s.sampler.world_size = w;
  s.loader.batch_size = b;
  return s;
}

const std::string k500 = "synthetic:classes=10,per-class=50";  // n = 500
const std::string k600 = "synthetic:classes=10,per-class=60";  // n = 600
const std::string k1003 = "synthetic:counts=502,501";          // n = 1003

struct TextRow {
  std::string name;  // the pattern id
  Pattern pattern;
  Case a, b;
};

void PrintTo(const TextRow& r, std::ostream* os) {
  *os << r.name;
}

// Samples never evaluated, and samples evaluated at least once, from the coverage.
int64_t never_evaluated(const Evaluation& e) {
  return e.times_evaluated.count_equal(0);
}
int64_t evaluated(const Evaluation& e) {
  return int64_t(e.times_evaluated.size()) - never_evaluated(e);
}

// One list drawn with replacement, as the records show it (padding aside).
struct Draw {
  int64_t draws = 0, distinct = 0, repeated = 0;
};
Draw draw_of(const Evaluation& e) {
  std::map<int64_t, int64_t> times;
  for (int r = 0; r < e.records->world_size(); ++r)
    for_each_record(*e.records, r, [&](const Record& rec) {
      if ((rec.flags & (kPadding | kSanity)) == 0) ++times[rec.index];
    });
  Draw d;
  for (const auto& [index, k] : times) {
    d.draws += k;
    d.repeated += k > 1;
  }
  d.distinct = int64_t(times.size());
  return d;
}

// Cells of the ranks' matrices that differ from the exact count of their records.
int64_t rounded_rank_cells(const Evaluation& e) {
  int64_t cells = 0;
  for (int r = 0; r < e.records->world_size(); ++r) {
    Matrix exact(e.classes());
    for_each_record(*e.records, r,
                    [&](const Record& rec) { exact.at(rec.target, rec.prediction) += 1; });
    for (size_t i = 0; i < exact.cells.size(); ++i)
      cells += exact.cells[i] != e.per_rank[size_t(r)].cells[i];
  }
  return cells;
}

std::vector<TextRow> text_rows() {
  std::vector<TextRow> rows;
  auto add = [&](Pattern p, Case a, Case b) {
    rows.push_back({pattern_id(p), p, std::move(a), std::move(b)});
  };
  {
    // DistributedSampler pads n to ceil(n / w) * w.
    add(Pattern::PaddingDuplicates,
        fixed(base(k500, 3, 10),
              {{1, 500, ceil_to(500, 3), 3},
               {"1 padding record was counted", "pads the 500 samples to 501 for 3 ranks"}}),
        fixed(base(k1003, 8, 16),
              {{ceil_to(1003, 8) - 1003, 1003, ceil_to(1003, 8), 8},
               {"5 padding records were counted", "pads the 1003 samples to 1008 for 8 ranks"}}));
  }
  {
    // drop_last cuts n to a multiple of w, and drop_last=False would pad it to one; batches of
    // 25 end where each rank's 125 samples end, but no limit was set.
    Scenario a = base(k500, 3, 16), b = base(k1003, 8, 25);
    a.sampler.drop_last = b.sampler.drop_last = true;
    add(Pattern::SamplerDropLast,
        fixed(a,
              {{500 % 3, 500, ceil_to(500, 3), 3},
               {"2 samples were never evaluated (of 500)", "(500 samples become 501 on 3 ranks)"}}),
        fixed(b, {{1003 % 8, 1003, ceil_to(1003, 8), 8},
                  {"3 samples were never evaluated (of 1003)",
                   "(1003 samples become 1008 on 8 ranks)"}}));
  }
  {
    // Each rank keeps its whole batches: w * (n / w / b) * b of n.
    Scenario a = base(k500, 4, 16), b = base(k600, 3, 32);
    a.loader.drop_last = b.loader.drop_last = true;
    add(Pattern::LoaderDropLast,
        fixed(a, {{500 - 4 * (125 / 16 * 16), 500, 16}, {"whole batches of 16 only"}}),
        fixed(b, {{600 - 3 * (200 / 32 * 32), 600, 32}, {"whole batches of 32 only"}}));
  }
  {
    // k batches of b on each of w ranks.
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.loader.limit = BatchLimit::parse("5");
    b.loader.limit = BatchLimit::parse("3");
    add(Pattern::BatchLimitSubset,
        fixed(a, {{500 - 4 * 5 * 10, 500}, {"300 samples were never evaluated (of 500)"}}),
        fixed(b, {{600 - 3 * 3 * 16, 600}, {"456 samples were never evaluated (of 600)"}}));
  }
  {
    // A shuffled order under a limit of 5 batches, and one with padding and no limit.
    Scenario a = base(k500, 4, 10), b = base(k1003, 8, 16);
    a.sampler.shuffle = b.sampler.shuffle = true;
    a.sampler.epoch = b.sampler.epoch = 2;
    a.loader.limit = BatchLimit::parse("5");
    add(Pattern::ShuffledEval,
        fixed(a, {{500 - 4 * 5 * 10, 500, 5},
                  {"300 samples left out of 500", "the batch limit (5 batch(es) per rank)"},
                  {"padd"}}),
        fixed(b, {{ceil_to(1003, 8) - 1003},
                  {"(5 padding records)", "which samples get padded"},
                  {"left out"}}));
  }
  {
    // Every rank draws its own shuffled share: the coverage counts the overlap.
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.sampler.shuffle = b.sampler.shuffle = true;
    a.sampler.rank_seeds = {0, 1, 2, 3};
    b.sampler.rank_seeds = {5, 6, 7};
    auto expect = [](const Evaluation& e) {
      int64_t records = 0;
      for (int r = 0; r < e.records->world_size(); ++r) records += e.records->rank_size(r);
      return Expect{{records - evaluated(e), never_evaluated(e)}, {}, {}};
    };
    add(Pattern::RankOverlap, {a, expect}, {b, expect});
  }
  {
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.sampler.kind = b.sampler.kind = SamplerKind::None;
    add(Pattern::NoDistributedSampler,
        fixed(a, {{4, 500}, {"All 4 ranks evaluated the same 500 samples."}}),
        fixed(b, {{3, 600}, {"All 3 ranks evaluated the same 600 samples."}}));
  }
  {
    // Rank 0's own share reported: n / w of n.
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.sync = b.sync = SyncStrategy::Local;
    add(Pattern::Unsynced, fixed(a, {{500 / 4, 500}, {"rank 0's own matrix (125 of 500 counts)"}}),
        fixed(b, {{600 / 3, 600}, {"rank 0's own matrix (200 of 600 counts)"}}));
  }
  {
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.sync = b.sync = SyncStrategy::Double;
    add(Pattern::DoubleSync, fixed(a, {{4}, {"exactly 4 times the sum over ranks"}}),
        fixed(b, {{3}, {"exactly 3 times the sum over ranks"}}));
  }
  {
    // Uneven shares padded with zeros to the longest: w - n % w slots.
    Scenario a = base("synthetic:counts=251,250", 4, 10), b = base(k1003, 8, 16);
    a.sampler.kind = b.sampler.kind = SamplerKind::Unrepeated;
    a.sync = b.sync = SyncStrategy::GatherZeroPad;
    add(Pattern::GatherZeroPad, fixed(a, {{4 - 501 % 4}, {"3 extra (0, 0) pairs"}}),
        fixed(b, {{8 - 1003 % 8}, {"5 extra (0, 0) pairs"}}));
  }
  {
    // float16 and bfloat16 counters past their exact range: the rounded cells are counted
    // from the records.
    Scenario a = base("synthetic:classes=3,per-class=20000", 2, 32);
    Scenario b = base("synthetic:classes=2,per-class=3000", 3, 16);
    a.predictor = b.predictor = "perfect";
    a.dtype = CounterDtype::Float16;
    b.dtype = CounterDtype::BFloat16;
    add(Pattern::CounterPrecision,
        {a,
         [](const Evaluation& e) {
           return Expect{{rounded_rank_cells(e)}, {"is a float16 number"}, {"a bfloat16 number"}};
         }},
        {b, [](const Evaluation& e) {
           return Expect{{rounded_rank_cells(e)}, {"is a bfloat16 number"}, {"a float16 number"}};
         }});
  }
  {
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.sync = b.sync = SyncStrategy::NormalizeThenSum;
    add(Pattern::NormalizeThenSum, fixed(a, {{4}, {"(up to 4)"}}), fixed(b, {{3}, {"(up to 3)"}}));
  }
  {
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.ignore_index = 3;
    b.ignore_index = 7;
    add(Pattern::IgnoredTargets, fixed(a, {{3}, {"(ignore_index=3)"}}),
        fixed(b, {{7}, {"(ignore_index=7)"}}));
  }
  {
    // The sanity check's steps batches of b on each of w ranks.
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.loader.sanity_leak = b.loader.sanity_leak = true;
    a.loader.sanity_steps = 2;
    b.loader.sanity_steps = 3;
    add(Pattern::SanityLeak,
        fixed(a, {{4 * 2 * 10}, {"80 records were evaluated in the sanity check."}}),
        fixed(b, {{3 * 3 * 16}, {"144 records were evaluated in the sanity check."}}));
  }
  {
    // Accelerate rounds n up to a multiple of b * w.
    Scenario a = base(k500, 3, 16), b = base(k1003, 8, 10);
    a.sampler.kind = b.sampler.kind = SamplerKind::Accelerate;
    a.sync = b.sync = SyncStrategy::Gather;
    add(Pattern::PlainGatherPadding,
        fixed(a, {{500, ceil_to(500, 48), 3}, {"(500 samples counted as 528 on 3 ranks)"}}),
        fixed(b, {{1003, ceil_to(1003, 80), 8}, {"(1003 samples counted as 1040 on 8 ranks)"}}));
  }
  {
    // even_batches=False deals ceil(n / b) batches round-robin: rank r runs batches r, r + w,
    // ...; the last batch holds n % b.
    Scenario a = base(k500, 3, 16), b = base(k1003, 8, 10);
    a.sampler.kind = b.sampler.kind = SamplerKind::Accelerate;
    a.sampler.even_batches = b.sampler.even_batches = false;
    a.sync = b.sync = SyncStrategy::GatherForMetrics;
    auto steps = [](int64_t n, int64_t w, int64_t bs) {
      const int64_t batches = (n + bs - 1) / bs;
      std::vector<std::string> out;
      for (int64_t r = 0; r < w; ++r) {
        int64_t k = 0, samples = 0;
        for (int64_t i = r; i < batches; i += w, ++k) samples += i + 1 < batches ? bs : n - i * bs;
        out.push_back("rank " + std::to_string(r) + ": " + std::to_string(k) + " steps (" +
                      std::to_string(samples) + " samples)");
      }
      return out;
    };
    add(Pattern::UnevenSteps, fixed(a, {{}, steps(500, 3, 16)}),
        fixed(b, {{}, steps(1003, 8, 10)}));
  }
  {
    // even_batches=False when the batches divide evenly among the ranks: every rank runs the
    // same steps, the last rank's last batch holds n - (batches - 1) b.
    Scenario a = base(k500, 4, 16), b = base(k600, 3, 41);
    a.sampler.kind = b.sampler.kind = SamplerKind::Accelerate;
    a.sampler.even_batches = b.sampler.even_batches = false;
    a.sync = SyncStrategy::GatherForMetrics;
    b.sync = SyncStrategy::Gather;
    add(Pattern::UnequalLastBatches,
        fixed(a, {{8, 4}, {"rank 3: 8 steps (116 samples, last batch 4)", "gather-for-metrics"}}),
        fixed(b, {{5, 26},
                  {"rank 2: 5 steps (190 samples, last batch 26)",
                   "last step's gather is given tensors of unequal sizes"}}));
  }
  {
    // Lightning's wrapper over a weighted sampler, each rank seeded apart.
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.sampler.kind = b.sampler.kind = SamplerKind::LightningWrapper;
    a.sampler.inner.kind = b.sampler.inner.kind = InnerSampler::Kind::WeightedRandom;
    a.sampler.rank_seeds = {101, 202, 303, 404};
    b.sampler.rank_seeds = {11, 22, 33};
    auto expect = [](const Evaluation& e) {
      return Expect{{never_evaluated(e)}, {"seeded differently"}, {}};
    };
    add(Pattern::WrapperOverlap, {a, expect}, {b, expect});
  }
  {
    // The same wrapper with every rank's generator alike: one list drawn with replacement.
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.sampler.kind = b.sampler.kind = SamplerKind::LightningWrapper;
    a.sampler.inner.kind = b.sampler.inner.kind = InnerSampler::Kind::WeightedRandom;
    auto expect = [](int w, int64_t n) {
      return [w, n](const Evaluation& e) {
        const Draw d = draw_of(e);
        return Expect{{w, d.draws, d.distinct, d.repeated, never_evaluated(e), n},
                      {"All " + std::to_string(w) + " ranks took their positions of one list of " +
                       std::to_string(d.draws) + " draws"},
                      {}};
      };
    };
    add(Pattern::SamplerWithReplacement, {a, expect(4, 500)}, {b, expect(3, 600)});
  }
  {
    // K validations of one epoch under a limit: w * k * b samples, the rest never seen.
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.sampler.shuffle = b.sampler.shuffle = true;
    a.sampler.epoch = 1;
    b.sampler.epoch = 2;
    a.loader.limit = BatchLimit::parse("3");
    b.loader.limit = BatchLimit::parse("2");
    a.validations_per_epoch = 4;
    b.validations_per_epoch = 3;
    add(Pattern::RepeatedValidationSubset,
        fixed(a, {{4, 1, 4 * 3 * 10, 500 - 4 * 3 * 10},
                  {"All 4 validations of epoch 1 evaluated the same 120 samples; 380 were never"}}),
        fixed(b, {{3, 2, 3 * 2 * 16, 600 - 3 * 2 * 16},
                  {"All 3 validations of epoch 2 evaluated the same 96 samples; 504 were never"}}));
  }
  {
    // A DistributedSampler's shard sharded again by Accelerate: the coverage counts the share.
    Scenario a = base(k500, 4, 16), b = base(k1003, 3, 10);
    a.sampler.kind = b.sampler.kind = SamplerKind::Accelerate;
    a.sampler.accelerate_input = b.sampler.accelerate_input = AccelerateInput::DistributedSampler;
    a.sync = b.sync = SyncStrategy::AllReduce;
    auto expect = [](int w, int64_t n, int64_t bs) {
      return [w, n, bs](const Evaluation& e) {
        return Expect{
            {evaluated(e), n, w, bs},
            {"(" + std::to_string(evaluated(e)) + " of " + std::to_string(n) + " samples on " +
             std::to_string(w) + " ranks with batches of " + std::to_string(bs) + ")"},
            {}};
      };
    };
    add(Pattern::AccelerateDoubleShard, {a, expect(4, 500, 16)}, {b, expect(3, 1003, 10)});
  }
  {
    // The same double sharding reported through gather_for_metrics: what it trimmed is what
    // the ranks counted beyond the reported matrix.
    Scenario a = base(k500, 4, 16), b = base(k1003, 3, 10);
    a.sampler.kind = b.sampler.kind = SamplerKind::Accelerate;
    a.sampler.accelerate_input = b.sampler.accelerate_input = AccelerateInput::DistributedSampler;
    a.sync = b.sync = SyncStrategy::GatherForMetrics;
    auto expect = [](const Evaluation& e) {
      double counted = 0;
      for (const Matrix& m : e.per_rank) counted += m.total();
      const auto trimmed = int64_t(counted - e.synced->total());
      return Expect{
          {trimmed},
          {std::to_string(trimmed) + " records were trimmed from the last gathered batch"}};
    };
    add(Pattern::GatherForMetricsMismatch, {a, expect}, {b, expect});
  }
  {
    // A limit of 0 batches records nothing: no number to state.
    Scenario a = base(k500, 4, 10), b = base(k600, 3, 16);
    a.loader.limit = b.loader.limit = BatchLimit::parse("0");
    add(Pattern::NothingRecorded, fixed(a, {}), fixed(b, {}));
  }
  return rows;
}

bool limited(const Scenario& s) {
  return s.loader.limit.kind == BatchLimit::Kind::Count ||
         (s.loader.limit.kind == BatchLimit::Kind::Fraction && s.loader.limit.fraction < 1.0);
}

struct Worded {
  std::string text;
  Expect expect;
};

// The last validation's finding of the pattern, worded.
Worded worded(const TextRow& row, const Case& c) {
  const Evaluation e = simulate_validations(c.scenario).back();
  for (const Finding& f : e.diagnosis.findings)
    if (f.pattern == row.pattern) return {full_text(describe(f)), c.expect(e)};
  std::string found;
  for (const Finding& f : e.diagnosis.findings) found += std::string(" ") + pattern_id(f.pattern);
  throw std::runtime_error("no " + row.name + " finding; found:" + found);
}

// The old example literals of the catalogue's general words.
const std::vector<std::string> kOldLiterals = {"510", "512", "128 of", "25,000", "25,600"};

void check_words(const TextRow& row, const Worded& own, const Worded& other, bool has_limit,
                 const std::string& which) {
  SCOPED_TRACE(which + ": " + own.text);
  const std::set<int64_t> stated = numbers_in(own.text);
  for (int64_t n : own.expect.numbers) EXPECT_TRUE(stated.count(n)) << "missing number " << n;
  for (const std::string& p : own.expect.phrases)
    EXPECT_NE(own.text.find(p), std::string::npos) << "missing: " << p;
  for (const std::string& p : own.expect.absent)
    EXPECT_EQ(own.text.find(p), std::string::npos) << "says: " << p;
  const std::set<int64_t> mine(own.expect.numbers.begin(), own.expect.numbers.end());
  const std::set<int64_t> constants = constants_of(row.pattern);
  for (int64_t n : other.expect.numbers)
    if (!mine.count(n) && !constants.count(n)) {
      EXPECT_FALSE(stated.count(n)) << "the other scenario's number " << n;
    }
  if (!has_limit) {
    EXPECT_EQ(own.text.find("batch limit"), std::string::npos);
  }
  // An old example's number may be this scenario's own (128 of 500 on 4 ranks).
  for (const std::string& old : kOldLiterals) {
    const std::set<int64_t> quoted = numbers_in(old);
    if (std::includes(mine.begin(), mine.end(), quoted.begin(), quoted.end())) continue;
    EXPECT_EQ(own.text.find(old), std::string::npos) << old;
  }
}

}  // namespace

class EachSimulatedPattern : public testing::TestWithParam<TextRow> {};

TEST_P(EachSimulatedPattern, StatesItsOwnScenariosNumbers) {
  const TextRow& row = GetParam();
  const Worded a = worded(row, row.a), b = worded(row, row.b);
  check_words(row, a, b, limited(row.a.scenario), "scenario a");
  check_words(row, b, a, limited(row.b.scenario), "scenario b");
}

INSTANTIATE_TEST_SUITE_P(FindingTexts, EachSimulatedPattern, testing::ValuesIn(text_rows()),
                         test::NamedRow{});

// Every pattern of the catalogue has a simulated row above, or (a run's own patterns) facts
// below.
TEST(FindingTexts, EveryPatternIsCovered) {
  std::set<Pattern> covered;
  for (const TextRow& r : text_rows()) covered.insert(r.pattern);
  // never-evaluated: a simulation always knows its limit; logged-accuracy: a right matrix.
  // test_diagnosis words both from their facts.
  for (Pattern p : {Pattern::IncompleteRun, Pattern::UnexplainedDifference, Pattern::NeverEvaluated,
                    Pattern::LoggedAccuracy})
    covered.insert(p);
  for (Pattern p : all_patterns()) EXPECT_TRUE(covered.count(p)) << pattern_id(p);
}

// The general words (no facts): no example numbers, and a batch limit only in the patterns
// that are about one.
class GeneralWords : public testing::TestWithParam<PatternRow> {};

TEST_P(GeneralWords, HoldNoExampleAndNoLimitUnasked) {
  const Pattern p = GetParam().pattern;
  const std::string text = full_text(describe_pattern(p));
  for (const std::string& old : kOldLiterals)
    EXPECT_EQ(text.find(old), std::string::npos) << old << "\n" << text;
  EXPECT_EQ(text.find(" become "), std::string::npos) << text;
  EXPECT_EQ(text.find(" counted as "), std::string::npos) << text;
  // never-evaluated names a batch limit among the causes the records cannot tell apart.
  if (p != Pattern::BatchLimitSubset && p != Pattern::RepeatedValidationSubset &&
      p != Pattern::NeverEvaluated) {
    EXPECT_EQ(text.find("batch limit"), std::string::npos) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(FindingTexts, GeneralWords, testing::ValuesIn(pattern_rows()),
                         test::NamedRow{});

// Patterns of real and imported runs, and fact combinations no simulation gives: worded from
// facts built here.
namespace {

std::string words(Pattern p, const Facts& f) {
  return full_text(describe(Finding(p, f)));
}

}  // namespace

TEST(FindingTexts, SamplerDropLastWithoutPaddingOrSize) {
  Facts even;
  even.dataset_size = 600;
  even.world_size = 3;
  even.missing = 0;
  const std::string e = words(Pattern::SamplerDropLast, even);
  EXPECT_NE(e.find("At this size (600 samples on 3 ranks) DistributedSampler neither drops nor "
                   "pads"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find(" become "), std::string::npos) << e;
  Facts unknown;
  unknown.missing = 2;
  const std::string u = words(Pattern::SamplerDropLast, unknown);
  std::set<int64_t> own = numbers_in(u);
  for (int64_t c : constants_of(Pattern::SamplerDropLast)) own.erase(c);
  EXPECT_EQ(own, std::set<int64_t>({2})) << u;  // "2 samples were never evaluated"
  EXPECT_NE(u.find("when len(dataset) is not a multiple of the world size"), std::string::npos)
      << u;
}

TEST(FindingTexts, GatherForMetricsMismatchStatesItsCounts) {
  Facts a, b;
  a.trimmed = 14;
  a.padding_kept = 2;
  b.trimmed = 37;
  b.padding_kept = 5;
  const std::string ta = words(Pattern::GatherForMetricsMismatch, a);
  const std::string tb = words(Pattern::GatherForMetricsMismatch, b);
  EXPECT_NE(ta.find("14 records were trimmed"), std::string::npos) << ta;
  EXPECT_NE(ta.find("while 2 padding duplicates were kept"), std::string::npos) << ta;
  EXPECT_NE(tb.find("37 records were trimmed"), std::string::npos) << tb;
  EXPECT_FALSE(numbers_in(ta).count(37));
  EXPECT_FALSE(numbers_in(tb).count(14));
}

TEST(FindingTexts, IncompleteRunNamesWhatStoppedIt) {
  Facts a, b;
  a.stopped_by = "rank 2 exited with status 9";
  b.stopped_by = "timeout after 30 s";
  const std::string ta = words(Pattern::IncompleteRun, a);
  const std::string tb = words(Pattern::IncompleteRun, b);
  EXPECT_NE(ta.find("(rank 2 exited with status 9)"), std::string::npos) << ta;
  EXPECT_EQ(ta.find("timeout after"), std::string::npos) << ta;
  EXPECT_NE(tb.find("(timeout after 30 s)"), std::string::npos) << tb;
}

TEST(FindingTexts, UnexplainedDifferenceNamesItsCell) {
  Facts f;
  f.unexplained_cells = 3;
  f.first_unexplained = CellFact{1, 4, 5, 17, 19};
  const std::string t = words(Pattern::UnexplainedDifference, f);
  EXPECT_NE(t.find("3 cells of the ranks' matrices"), std::string::npos) << t;
  EXPECT_NE(t.find("rank 1, row 4 column 5: 17 where the records' exact count is 19"),
            std::string::npos)
      << t;
}

TEST(FindingTexts, ReductionWordsFitTheirCase) {
  // A rank left out of the sum is not "one rank's local state"; one rank added twice does
  // not make every count world_size times too large.
  Facts left;
  left.left_out_rank = 2;
  left.reported_total = 300;
  left.rank_sum_total = 400;
  const std::string l = words(Pattern::Unsynced, left);
  EXPECT_NE(l.find("every rank but rank 2 (300 of 400 counts)"), std::string::npos) << l;
  EXPECT_EQ(l.find("one rank's local state"), std::string::npos) << l;
  Facts twice;
  twice.added_twice_rank = 1;
  twice.reported_total = 500;
  twice.rank_sum_total = 400;
  const std::string t = words(Pattern::DoubleSync, twice);
  EXPECT_NE(t.find("rank 1's counts added a second time (500 for 400 counts)"), std::string::npos)
      << t;
  EXPECT_EQ(t.find("world_size times"), std::string::npos) << t;
  // Ranks that disagree, with no total known: no number stands in for it.
  Facts apart;
  apart.reporting_rank = 0;
  apart.disagreeing_ranks = {2, 3};
  const std::string a = words(Pattern::Unsynced, apart);
  EXPECT_NE(a.find("rank 0 reported a matrix, ranks 2, 3 something else"), std::string::npos) << a;
}

TEST(FindingTexts, FrameworkWordsWithoutUnknownNumbers) {
  // Steps without the ranks' samples or the collective: none invented.
  Facts steps;
  steps.rank_steps = {11, 10};
  const std::string s = words(Pattern::UnevenSteps, steps);
  EXPECT_NE(s.find("(rank 0: 11 steps, rank 1: 10 steps), so the per-step collective would hang"),
            std::string::npos)
      << s;
  // Repeated validations without an epoch or a missing count.
  Facts v;
  v.validations = 3;
  const std::string t = words(Pattern::RepeatedValidationSubset, v);
  EXPECT_NE(t.find("All 3 validations evaluated the same samples."), std::string::npos) << t;
  // A shuffled order with nothing measured says neither a limit nor a number.
  const std::string o = words(Pattern::ShuffledEval, Facts{});
  EXPECT_EQ(o.find("batch limit"), std::string::npos) << o;
  EXPECT_TRUE(numbers_in(o).empty()) << o;
}

// No lesson's finding quotes the old example literals: each lesson as shipped when its dataset
// is not of 510 samples, otherwise resized to 530 (per-class 53) so a 510 would be an example.
namespace {

struct LessonRow {
  std::string name;
  Scenario scenario;
};

void PrintTo(const LessonRow& r, std::ostream* os) {
  *os << r.name;
}

std::vector<LessonRow> lesson_rows() {
  std::vector<LessonRow> rows;
  for (const LessonInfo& l : load_lessons().lessons) {
    Scenario s = l.scenario;
    if (s.dataset == "synthetic:classes=10,per-class=51")
      s.dataset = "synthetic:classes=10,per-class=53";
    rows.push_back({l.name, s});
  }
  return rows;
}

}  // namespace

class EachLessonsWords : public testing::TestWithParam<LessonRow> {};

TEST_P(EachLessonsWords, QuoteNoOldExample) {
  const Scenario& s = GetParam().scenario;
  ASSERT_EQ(s.dataset.find("per-class=51"), std::string::npos);
  for (const Evaluation& e : simulate_validations(s))
    for (const Finding& f : e.diagnosis.findings) {
      const std::string text = full_text(describe(f));
      for (const std::string& old : kOldLiterals)
        EXPECT_EQ(text.find(old), std::string::npos) << pattern_id(f.pattern) << ": " << text;
      if (!limited(s)) {
        EXPECT_EQ(text.find("batch limit"), std::string::npos) << text;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(FindingTexts, EachLessonsWords, testing::ValuesIn(lesson_rows()),
                         test::NamedRow{});

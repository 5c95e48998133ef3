// The diagnosis of Lightning's DistributedSamplerWrapper over a sampler drawing with
// replacement, from records laid out as the wrapper deals them (rank r takes positions r::W of
// its list, padded from the list's start): one list shared by every rank is the sampler's own
// draw (sampler-with-replacement), a list per rank is wrapper-overlap, and repeats within a
// rank are a sanity leak only when they have a leaked sanity check's shape.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/diagnosis/diagnosis.h"
#include "core/sim/engine.h"

using namespace shardlens;

namespace {

constexpr int kRanks = 4;
constexpr int32_t kClasses = 4;
constexpr int64_t kDataset = 20;

// 17 draws with replacement from 20 samples: padded to 20 positions, ranks 1 to 3 each
// evaluate one padding record (positions 17, 18, 19 repeat positions 0, 1, 2).
const std::vector<int64_t> kShared = {3, 8, 3, 11, 8, 15, 0, 3, 19, 6, 11, 2, 15, 8, 1, 6, 12};

// Every rank's own draw: rank r's list is the shared one rotated by r.
std::vector<std::vector<int64_t>> own_lists() {
  std::vector<std::vector<int64_t>> lists;
  for (int r = 0; r < kRanks; ++r) {
    std::vector<int64_t> l = kShared;
    std::rotate(l.begin(), l.begin() + r * 5, l.end());
    lists.push_back(l);
  }
  return lists;
}

// A wrapped run of perfect predictions (class = index % 4): each rank's records are its
// positions of its list (lists[0] for every rank when only one is given), the first `limit`
// of them when limit >= 0.
struct WrapperRun {
  StoredRecords records;
  std::vector<Matrix> per_rank;
  Matrix reported{kClasses};

  WrapperRun(const std::vector<std::vector<int64_t>>& lists, int limit) {
    for (int r = 0; r < kRanks; ++r) {
      const std::vector<int64_t>& list = lists[lists.size() == 1 ? 0 : size_t(r)];
      const auto m = static_cast<int64_t>(list.size());
      const int64_t share = (m + kRanks - 1) / kRanks;
      std::vector<Record> rows;
      Matrix own(kClasses);
      for (int64_t k = 0; k < share && (limit < 0 || k < limit); ++k) {
        const int64_t p = r + k * kRanks;
        const int64_t i = list[size_t(p % m)];
        const auto t = static_cast<int32_t>(i % kClasses);
        rows.push_back({i, t, t, static_cast<uint8_t>(p >= m ? kPadding : 0)});
        own.at(t, t) += 1;
      }
      records.ranks.push_back(std::move(rows));
      reported += own;
      per_rank.push_back(std::move(own));
    }
  }

  Diagnosis diagnose_with(const DiagnosisInput& settings) const {
    DiagnosisInput in = settings;
    in.records = &records;
    in.per_rank = &per_rank;
    in.reported = &reported;
    in.dataset_size = kDataset;
    in.class_counts.assign(kClasses, kDataset / kClasses);
    return diagnose(in);
  }
};

std::vector<std::string> patterns(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const Finding& f : d.findings) out.push_back(pattern_id(f.pattern));
  std::sort(out.begin(), out.end());
  return out;
}

std::string explanation(const Diagnosis& d, Pattern p) {
  for (const Finding& f : d.findings)
    if (f.pattern == p) return describe(f).explanation;
  return {};
}

struct WrapperCase {
  const char* name;
  bool shared;         // one list for every rank, or one per rank
  int limit;           // records per rank (-1: every position, padding included)
  bool sampler_known;  // the run recorded Lightning's wrapper over a weighted sampler
  int64_t seed;        // the recorded seed (PL_GLOBAL_SEED; 0: seed_everything never ran)
  std::optional<bool> plan_says_shared;  // what a simulation's plan knows
  std::vector<std::string> want;
  const char* words;  // in the first named pattern's explanation
};

// ctest lists a case by its name, not its bytes.
void PrintTo(const WrapperCase& c, std::ostream* os) {
  *os << c.name;
}

class WrapperDiagnosis : public testing::TestWithParam<WrapperCase> {};

TEST_P(WrapperDiagnosis, NamesTheRightPatterns) {
  const WrapperCase& c = GetParam();
  const WrapperRun run(c.shared ? std::vector<std::vector<int64_t>>{kShared} : own_lists(),
                       c.limit);
  DiagnosisInput settings;
  if (c.sampler_known) {
    settings.sampler = SamplerKind::LightningWrapper;
    settings.inner_with_replacement = true;
    settings.seed_everything_seed = c.seed;
  }
  settings.ranks_share_list = c.plan_says_shared;
  const Diagnosis d = run.diagnose_with(settings);
  EXPECT_FALSE(d.correct);
  EXPECT_EQ(patterns(d), c.want);
  const auto first = pattern_from_id(c.want.back());
  ASSERT_TRUE(first.has_value());
  EXPECT_NE(explanation(d, *first).find(c.words), std::string::npos) << explanation(d, *first);
  for (const Finding& f : d.findings)
    if (f.pattern == Pattern::SamplerWithReplacement) {
      // The samples the evaluated part of the shared list holds more than once.
      const std::vector<int64_t> want =
          c.limit < 0 ? std::vector<int64_t>{3, 6, 8, 11, 15} : std::vector<int64_t>{3, 8, 11};
      EXPECT_EQ(f.samples, want);
      EXPECT_EQ(f.sample_count, int64_t(want.size()));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WrapperDiagnosis,
    testing::Values(
        // Every rank reached its padding, which repeats the head of the list other ranks
        // evaluated: one list, so its repeats and gaps are the draw's own.
        WrapperCase{"SharedListShownByPadding",
                    true,
                    -1,
                    true,
                    0,
                    std::nullopt,
                    {"padding-duplicates", "sampler-with-replacement"},
                    "one list of 17 draws (each of the 3 padding records repeats"},
        // The padding repeats a rank's own draw, not the sample another rank evaluated there.
        WrapperCase{"OwnListsShownByPadding",
                    false,
                    -1,
                    true,
                    0,
                    std::nullopt,
                    {"padding-duplicates", "wrapper-overlap"},
                    "the ranks listed different draws"},
        // The records outweigh the recorded seed: something drew differently on some rank.
        WrapperCase{"OwnListsDespiteSeedEverything",
                    false,
                    -1,
                    true,
                    7,
                    std::nullopt,
                    {"padding-duplicates", "wrapper-overlap"},
                    "the ranks listed different draws"},
        // A limit stops before the padding: only seed_everything says the lists were alike.
        WrapperCase{"SharedListByRecordedSeed",
                    true,
                    3,
                    true,
                    7,
                    std::nullopt,
                    {"sampler-with-replacement"},
                    "seed_everything(7) was recorded"},
        // Neither padding nor a seed tells: the ranks may have drawn their own lists.
        WrapperCase{"NothingTellsTheLists",
                    true,
                    3,
                    true,
                    0,
                    std::nullopt,
                    {"wrapper-overlap"},
                    "No padding record or recorded seed_everything tells"},
        // A simulation's plan knows the lists were one.
        WrapperCase{"SimulatedSharedList",
                    true,
                    3,
                    true,
                    0,
                    true,
                    {"sampler-with-replacement"},
                    "every simulated rank's order is the same list"},
        // No sampler recorded (hand-made dumps): the generic patterns, and the draws' repeats
        // within a rank are no sanity leak.
        WrapperCase{"UnknownSampler",
                    true,
                    -1,
                    false,
                    0,
                    std::nullopt,
                    {"padding-duplicates", "rank-overlap"},
                    "repeated a sample another rank had evaluated"}),
    [](const testing::TestParamInfo<WrapperCase>& info) { return std::string(info.param.name); });

// Unflagged repeats within ranks: a sanity leak only when each rank's first records come
// again right after them (the sanity check's batches, then the epoch from its start).
struct RepeatCase {
  const char* name;
  std::vector<std::vector<int64_t>> ranks;
  bool leak;
};

void PrintTo(const RepeatCase& c, std::ostream* os) {
  *os << c.name;
}

class WithinRankRepeats : public testing::TestWithParam<RepeatCase> {};

TEST_P(WithinRankRepeats, SanityLeakOnlyWhereItsShapeIs) {
  const RepeatCase& c = GetParam();
  StoredRecords records;
  std::vector<Matrix> per_rank;
  Matrix reported(2);
  for (const auto& indices : c.ranks) {
    std::vector<Record> rows;
    Matrix m(2);
    for (int64_t i : indices) {
      const auto t = static_cast<int32_t>(i % 2);
      rows.push_back({i, t, t, 0});
      m.at(t, t) += 1;
    }
    records.ranks.push_back(rows);
    reported += m;
    per_rank.push_back(m);
  }
  DiagnosisInput in;
  in.records = &records;
  in.per_rank = &per_rank;
  in.reported = &reported;
  in.dataset_size = 8;
  in.class_counts = {4, 4};
  const auto found = patterns(diagnose(in));
  EXPECT_EQ(std::count(found.begin(), found.end(), "sanity-leak"), c.leak ? 1 : 0)
      << testing::PrintToString(found);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WithinRankRepeats,
    testing::Values(
        RepeatCase{"SanityBatchesThenTheEpoch", {{0, 2, 0, 2, 4, 6}, {1, 3, 1, 3, 5, 7}}, true},
        RepeatCase{"OneRankLeaked", {{0, 2, 0, 2, 4, 6}, {1, 3, 5, 7}}, true},
        RepeatCase{"ScatteredRepeats", {{0, 2, 4, 2, 6, 0}, {1, 3, 5, 7}}, false},
        RepeatCase{"PrefixPlusAnotherRepeat", {{0, 2, 0, 2, 4, 4}, {1, 3, 1, 3, 5, 7}}, false}),
    [](const testing::TestParamInfo<RepeatCase>& info) { return std::string(info.param.name); });

// A simulation and the same records read as an import (the sampler known from recorded
// settings, no plan) are diagnosed alike: one row for one list shared by every rank (no
// rank seeds), one for a list of each rank's own.
class WrapperSimulationAndImport : public testing::TestWithParam<bool> {};

TEST_P(WrapperSimulationAndImport, Agree) {
  const bool shared = GetParam();
  Scenario s;
  s.dataset = "synthetic:classes=4,per-class=26";
  s.predictor = "perfect";
  s.sampler.kind = SamplerKind::LightningWrapper;
  s.sampler.world_size = 4;
  s.sampler.inner.kind = InnerSampler::Kind::WeightedRandom;
  s.sampler.inner.num_samples = 61;
  s.loader.batch_size = 2;
  s.sampler.rank_seeds = shared ? std::vector<int64_t>{} : std::vector<int64_t>{1, 2, 3, 4};
  const Evaluation e = simulate(s);
  DiagnosisInput in;
  in.records = e.records.get();
  in.per_rank = &e.per_rank;
  in.reported = &*e.synced;
  in.dataset_size = e.meta.dataset_size;
  in.class_counts = e.meta.class_counts;
  in.sampler = SamplerKind::LightningWrapper;
  in.inner_with_replacement = true;
  in.seed_everything_seed = 0;
  const Diagnosis imported = diagnose(in);
  EXPECT_EQ(patterns(imported), patterns(e.diagnosis));
  const auto p = patterns(e.diagnosis);
  EXPECT_EQ(std::count(p.begin(), p.end(), shared ? "sampler-with-replacement" : "wrapper-overlap"),
            1)
      << testing::PrintToString(p);
  EXPECT_EQ(std::count(p.begin(), p.end(), "sanity-leak"), 0);
  EXPECT_EQ(std::count(p.begin(), p.end(), "rank-overlap"), 0);
}

INSTANTIATE_TEST_SUITE_P(Lists, WrapperSimulationAndImport, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "SharedList" : "OwnLists");
                         });

}  // namespace

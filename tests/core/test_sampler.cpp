// Samplers against torch's DistributedSampler vectors and the rules in docs/ARCHITECTURE.md.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <string>

#include "core/torchsem/sampler.h"
#include "core/vocabulary/types.h"
#include "tests/common/test_rows.h"

using namespace shardlens;

namespace {

std::vector<std::vector<int64_t>> indices_of(const std::vector<RankSequence>& ranks) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& r : ranks) out.push_back(r.indices());
  return out;
}

SamplerConfig distributed(int w, bool shuffle = false, int64_t seed = 0, int64_t epoch = 0,
                          bool drop_last = false) {
  SamplerConfig c;
  c.world_size = w;
  c.shuffle = shuffle;
  c.seed = seed;
  c.epoch = epoch;
  c.drop_last = drop_last;
  return c;
}

constexpr const char* kReferenceVectors = SHARDLENS_TEST_DATA_DIR "/reference/vectors.json";

// Read once, when the rows are made (before main); unreadable or not JSON gives no cases,
// which ReferenceVectorsAreThere reports.
const nlohmann::json& reference_vectors() {
  static const nlohmann::json vectors = [] {
    std::ifstream in(kReferenceVectors);
    nlohmann::json parsed = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? nlohmann::json{{"distributed_sampler", nlohmann::json::array()}}
                                 : parsed;
  }();
  return vectors;
}

// One row per case of torch's DistributedSampler, named by its settings.
struct ReferenceRow {
  std::string name;
  nlohmann::json vector;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const ReferenceRow& row, std::ostream* os) {
  *os << row.name;
}

std::vector<ReferenceRow> reference_rows() {
  std::vector<ReferenceRow> rows;
  for (const auto& v : reference_vectors()["distributed_sampler"]) {
    std::string name = "n" + v["n"].dump() + "_world" + v["world_size"].dump();
    if (v["shuffle"].get<bool>())
      name += "_shuffle_seed" + v["seed"].dump() + "_epoch" + v["epoch"].dump();
    if (v["drop_last"].get<bool>()) name += "_droplast";
    rows.push_back({name, v});
  }
  return shardlens::test::with_unique_names(std::move(rows));
}

class DistributedSamplerReference : public ::testing::TestWithParam<ReferenceRow> {};

}  // namespace

TEST(Sampler, ReferenceVectorsAreThere) {
  ASSERT_TRUE(std::ifstream(kReferenceVectors)) << kReferenceVectors << " cannot be read";
  EXPECT_GE(reference_vectors()["distributed_sampler"].size(), 6u);
}

TEST_P(DistributedSamplerReference, MatchesTorch) {
  const nlohmann::json& v = GetParam().vector;
  const auto c = distributed(v["world_size"], v["shuffle"], v["seed"], v["epoch"], v["drop_last"]);
  const auto want = v["ranks"].get<std::vector<std::vector<int64_t>>>();
  EXPECT_EQ(indices_of(sample(v["n"], c)), want);
}

INSTANTIATE_TEST_SUITE_P(Vectors, DistributedSamplerReference,
                         ::testing::ValuesIn(reference_rows()), shardlens::test::NamedRow());

TEST(Sampler, PaddingIsFlaggedAndRepeatsTheOrderStart) {
  const auto ranks = sample(10, distributed(4));
  EXPECT_EQ(ranks[2].flags(), (std::vector<uint8_t>{0, 0, kPadding}));
  EXPECT_EQ(ranks[3].flags(), (std::vector<uint8_t>{0, 0, kPadding}));
  EXPECT_EQ(ranks[0].flags(), (std::vector<uint8_t>{0, 0, 0}));
}

TEST(Sampler, PaddingLongerThanDatasetWrapsCyclically) {
  // n=3, W=8: 5 padding positions repeat the order 0,1,2,0,1.
  const auto ranks = sample(3, distributed(8));
  EXPECT_EQ(indices_of(ranks),
            (std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0}, {1}, {2}, {0}, {1}}));
}

TEST(Sampler, NumSamplesFormula) {
  EXPECT_EQ(distributed_num_samples(10, 4, false), 3);
  EXPECT_EQ(distributed_num_samples(10, 4, true), 2);
  EXPECT_EQ(distributed_num_samples(12, 4, true), 3);
  EXPECT_EQ(distributed_num_samples(3, 8, true), 0);
  EXPECT_EQ(distributed_num_samples(9, 8, true), 1);
}

TEST(Sampler, UnrepeatedHasNoPaddingAndCoversOnce) {
  SamplerConfig c = distributed(4);
  c.kind = SamplerKind::Unrepeated;
  const auto ranks = sample(10, c);
  EXPECT_EQ(indices_of(ranks),
            (std::vector<std::vector<int64_t>>{{0, 4, 8}, {1, 5, 9}, {2, 6}, {3, 7}}));
}

TEST(Sampler, UnrepeatedShuffleSeedsWithEpochAlone) {
  SamplerConfig c = distributed(2, true, 123, 5);
  c.kind = SamplerKind::Unrepeated;
  const auto perm = randperm(9, 5);
  const auto ranks = sample(9, c);
  EXPECT_EQ(ranks[0].indices(),
            (std::vector<int64_t>{perm[0], perm[2], perm[4], perm[6], perm[8]}));
}

TEST(Sampler, SequentialSplitsIntoContiguousBlocks) {
  SamplerConfig c = distributed(3);
  c.kind = SamplerKind::Sequential;
  EXPECT_EQ(indices_of(sample(7, c)),
            (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
}

TEST(Sampler, NoneGivesEveryRankEverything) {
  SamplerConfig c = distributed(3);
  c.kind = SamplerKind::None;
  for (const auto& r : indices_of(sample(5, c)))
    EXPECT_EQ(r, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(Sampler, ShuffledOrderIsSharedByAllRanks) {
  const auto ranks = sample(1000, distributed(4, true, 3, 2));
  const auto* order = ranks[0].segments[0].order.get();
  for (const auto& r : ranks) EXPECT_EQ(r.segments[0].order.get(), order);
  EXPECT_EQ(order->perm, randperm(1000, 5));
}

TEST(Sampler, UnshuffledOrderNeedsNoPermutation) {
  const auto ranks = sample(1000, distributed(4));
  EXPECT_TRUE(ranks[0].segments[0].order->perm.empty());
}

TEST(Sampler, RankSeedsMakeShardsOverlap) {
  SamplerConfig c = distributed(4, true);
  c.rank_seeds = {0, 1, 2, 3};
  std::multiset<int64_t> all;
  for (const auto& r : indices_of(sample(100, c))) all.insert(r.begin(), r.end());
  EXPECT_EQ(all.size(), 100u);
  EXPECT_LT(std::set<int64_t>(all.begin(), all.end()).size(), 100u);
}

TEST(Sampler, BadConfigurationsAreInputErrors) {
  EXPECT_THROW(sample(10, distributed(0)), InputError);
  SamplerConfig c = distributed(4);
  c.rank_seeds = {1, 2};
  EXPECT_THROW(sample(10, c), InputError);
  EXPECT_THROW(sample(0, distributed(2)), InputError);
  EXPECT_THROW(parse_sampler_kind("random"), InputError);
}

TEST(Sampler, PrefixCutsAcrossSegments) {
  const auto ranks = sample(10, distributed(4));
  EXPECT_EQ(ranks[2].prefix(2).indices(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(ranks[2].prefix(0).size(), 0);
  EXPECT_EQ(ranks[2].prefix(100).size(), 3);
}

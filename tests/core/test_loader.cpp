// DataLoader batching and Lightning's batch limit and sanity check.
#include <gtest/gtest.h>

#include <string>

#include "core/torchsem/loader.h"
#include "core/vocabulary/types.h"
#include "tests/common/test_rows.h"

using namespace shardlens;

TEST(BatchLimit, IntAndFloatFollowLightning) {
  EXPECT_EQ(BatchLimit::parse("10").apply(13), 10);
  EXPECT_EQ(BatchLimit::parse("10").apply(7), 7);
  EXPECT_EQ(BatchLimit::parse("1").apply(13), 1);       // the int 1 is one batch
  EXPECT_EQ(BatchLimit::parse("1.0").apply(13), 13);    // the float 1.0 is all
  EXPECT_EQ(BatchLimit::parse("0.29").apply(100), 28);  // int(100 * 0.29) in doubles
  EXPECT_EQ(BatchLimit::parse("0.5").apply(13), 6);
  EXPECT_EQ(BatchLimit::parse("0").apply(13), 0);
  EXPECT_EQ(BatchLimit::parse("0.0").apply(13), 0);
  EXPECT_EQ(BatchLimit::parse("all").apply(13), 13);
}

TEST(BatchLimit, FractionGivingZeroBatchesIsAnError) {
  EXPECT_THROW(BatchLimit::parse("0.05").apply(10), InputError);
  EXPECT_NO_THROW(BatchLimit::parse("0.1").apply(10));
}

namespace {

// limit_batches texts Lightning refuses, one row each, named by what is wrong.
struct LimitTextRow {
  std::string name;
  const char* text;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const LimitTextRow& row, std::ostream* os) {
  *os << row.name;
}

class MalformedBatchLimit : public ::testing::TestWithParam<LimitTextRow> {};

// Every kind of limit: all, a batch count, a fraction, the float 1.0.
class BatchLimitText : public ::testing::TestWithParam<LimitTextRow> {};

}  // namespace

TEST_P(MalformedBatchLimit, IsRejected) {
  EXPECT_THROW(BatchLimit::parse(GetParam().text), InputError);
}

INSTANTIATE_TEST_SUITE_P(
    Texts, MalformedBatchLimit,
    ::testing::Values(LimitTextRow{"NegativeInt", "-1"}, LimitTextRow{"FractionAboveOne", "1.5"},
                      LimitTextRow{"Word", "abc"}, LimitTextRow{"TrailingLetter", "10x"},
                      LimitTextRow{"NegativeFraction", "-0.5"}, LimitTextRow{"NotANumber", "nan"}),
    shardlens::test::NamedRow());

TEST_P(BatchLimitText, RoundTrips) {
  const char* text = GetParam().text;
  EXPECT_EQ(BatchLimit::parse(BatchLimit::parse(text).to_string()).apply(1000),
            BatchLimit::parse(text).apply(1000));
}

INSTANTIATE_TEST_SUITE_P(Kinds, BatchLimitText,
                         ::testing::Values(LimitTextRow{"All", "all"},
                                           LimitTextRow{"BatchCount", "10"},
                                           LimitTextRow{"Fraction", "0.25"},
                                           LimitTextRow{"FloatOne", "1.0"}),
                         shardlens::test::NamedRow());

TEST(Loader, BatchesPerRank) {
  LoaderConfig l;
  l.batch_size = 4;
  EXPECT_EQ(batches_per_rank(10, l), 3);
  l.drop_last = true;
  EXPECT_EQ(batches_per_rank(10, l), 2);
}

TEST(Loader, PlanCutsEachRankAfterItsLimitedBatches) {
  SamplerConfig s;
  s.world_size = 2;
  LoaderConfig l;
  l.batch_size = 3;
  l.limit = BatchLimit::parse("2");
  const ShardPlan plan = plan_shards(20, s, l);
  EXPECT_EQ(plan.evaluated[0].sequence.indices(), (std::vector<int64_t>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(plan.evaluated[1].batches, 2);
  EXPECT_EQ(plan.evaluated[1].sampler_size, 10);
}

TEST(Loader, LoaderDropLastRemovesPartialBatch) {
  SamplerConfig s;
  s.world_size = 2;
  LoaderConfig l;
  l.batch_size = 4;
  l.drop_last = true;
  const ShardPlan plan = plan_shards(10, s, l);  // 5 per rank -> one batch of 4
  EXPECT_EQ(plan.evaluated[0].sequence.indices(), (std::vector<int64_t>{0, 2, 4, 6}));
}

TEST(Loader, SanityLeakPrependsEpochZeroBatches) {
  SamplerConfig s;
  s.world_size = 2;
  s.shuffle = true;
  s.epoch = 3;
  LoaderConfig l;
  l.batch_size = 2;
  l.sanity_leak = true;
  const ShardPlan plan = plan_shards(12, s, l);
  const auto perm0 = randperm(12, 0);
  const auto perm3 = randperm(12, 3);
  const auto got = plan.evaluated[1].sequence.indices();
  const auto flags = plan.evaluated[1].sequence.flags();
  ASSERT_EQ(got.size(), 4u + 6u);  // 2 sanity batches of 2, then the epoch's 6 samples
  EXPECT_EQ(got[0], perm0[1]);
  EXPECT_EQ(got[1], perm0[3]);
  EXPECT_EQ(got[4], perm3[1]);
  EXPECT_EQ(flags[0], kSanity);
  EXPECT_EQ(flags[4], 0);
  EXPECT_EQ(plan.evaluated[1].sanity_batches, 2);
}

TEST(Loader, SanityStepsAreCappedByTheLimit) {
  SamplerConfig s;
  s.world_size = 1;
  LoaderConfig l;
  l.batch_size = 5;
  l.sanity_leak = true;
  l.limit = BatchLimit::parse("1");
  EXPECT_EQ(plan_shards(100, s, l).evaluated[0].sanity_batches, 1);
}

TEST(Loader, BadBatchSize) {
  LoaderConfig l;
  l.batch_size = 0;
  EXPECT_THROW(plan_shards(10, SamplerConfig{}, l), InputError);
}

// shardlens::randperm (core/torchsem/randperm.h, a reimplementation) against torch::randperm of the
// LibTorch this build links, for many (n, seed) pairs. The seeds cover the corners of how a
// 64-bit seed reaches mt19937's 32-bit state: negative, 2^32 and above, INT64_MIN/MAX.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/torch/model.h"
#include "core/torch/torch_oracle.h"
#include "core/torchsem/randperm.h"

namespace shardlens {
namespace {

void expect_same(int64_t n, int64_t seed) {
  const std::vector<int64_t> oracle = torch_randperm(n, seed);
  const std::vector<uint32_t> ours = randperm(n, seed, TorchVersion::parse(libtorch_version()));
  ASSERT_EQ(ours.size(), oracle.size()) << "n=" << n << " seed=" << seed;
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(int64_t(ours[i]), oracle[i]) << "n=" << n << " seed=" << seed << " at " << i;
  }
}

// The corners of a 64-bit seed, each named.
struct Seed {
  const char* name;
  int64_t value;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const Seed& row, std::ostream* os) {
  *os << row.name;
}

const Seed kSeeds[] = {{"Zero", 0},
                       {"One", 1},
                       {"FortyTwo", 42},
                       {"MinusOne", -1},
                       {"MinusFortyTwo", -42},
                       {"TwoToThe31", int64_t(1) << 31},
                       {"TwoToThe32MinusOne", (int64_t(1) << 32) - 1},
                       {"TwoToThe32", int64_t(1) << 32},
                       {"TwoToThe32PlusSeven", (int64_t(1) << 32) + 7},
                       {"HighBitsOnly", int64_t(123456789) << 20},
                       {"Int64Max", std::numeric_limits<int64_t>::max()},
                       {"Int64Min", std::numeric_limits<int64_t>::min()}};

std::string signed_name(int64_t v) {
  return v < 0 ? "minus" + std::to_string(-v) : std::to_string(v);
}

// One row per seed corner and small size.
struct SmallRow {
  std::string name;
  int64_t seed;
  int64_t n;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const SmallRow& row, std::ostream* os) {
  *os << row.name;
}

std::vector<SmallRow> small_rows() {
  std::vector<SmallRow> rows;
  for (const Seed& seed : kSeeds)
    for (int64_t n : {0, 1, 2, 3, 7, 16, 100, 257, 1000, 4096, 10007})
      rows.push_back({std::string(seed.name) + "_n" + std::to_string(n), seed.value, n});
  return rows;
}

class TorchRandpermSmall : public ::testing::TestWithParam<SmallRow> {};

TEST_P(TorchRandpermSmall, EqualsTorch) {
  expect_same(GetParam().n, GetParam().seed);
}

INSTANTIATE_TEST_SUITE_P(SmallSizesEverySeed, TorchRandpermSmall, ::testing::ValuesIn(small_rows()),
                         [](const ::testing::TestParamInfo<SmallRow>& info) {
                           return info.param.name;
                         });

// n = 997 for every seed from -50 to 50, one row each.
class TorchRandpermManySeeds : public ::testing::TestWithParam<int64_t> {};

TEST_P(TorchRandpermManySeeds, EqualsTorch) {
  expect_same(997, GetParam());
}

INSTANTIATE_TEST_SUITE_P(ManySeeds, TorchRandpermManySeeds, ::testing::Range<int64_t>(-50, 51),
                         [](const ::testing::TestParamInfo<int64_t>& info) {
                           return "seed" + signed_name(info.param);
                         });

// n = 1,000,000, one row per seed.
class TorchRandpermLarge : public ::testing::TestWithParam<Seed> {};

TEST_P(TorchRandpermLarge, EqualsTorch) {
  expect_same(1000000, GetParam().value);
}

INSTANTIATE_TEST_SUITE_P(LargeN, TorchRandpermLarge,
                         ::testing::Values(Seed{"Zero", 0}, Seed{"MinusThree", -3},
                                           Seed{"TwoToThe33PlusFive", (int64_t(1) << 33) + 5}),
                         [](const ::testing::TestParamInfo<Seed>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace shardlens

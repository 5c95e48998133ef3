// shardlens::randperm (core/randperm.h, a reimplementation) against torch::randperm from the
// LibTorch this build links, for many (n, seed) pairs. The seeds cover the corners of how a
// 64-bit seed reaches mt19937's 32-bit state: negative, 2^32 and above, INT64_MIN/MAX.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
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

const int64_t kSeeds[] = {0,
                          1,
                          42,
                          -1,
                          -42,
                          int64_t(1) << 31,
                          (int64_t(1) << 32) - 1,
                          int64_t(1) << 32,
                          (int64_t(1) << 32) + 7,
                          int64_t(123456789) << 20,
                          std::numeric_limits<int64_t>::max(),
                          std::numeric_limits<int64_t>::min()};

TEST(TorchRandperm, SmallSizesEverySeed) {
  for (int64_t seed : kSeeds) {
    for (int64_t n : {0, 1, 2, 3, 7, 16, 100, 257, 1000, 4096, 10007}) expect_same(n, seed);
  }
}

TEST(TorchRandperm, ManySeeds) {
  for (int64_t seed = -50; seed <= 50; ++seed) expect_same(997, seed);
}

TEST(TorchRandperm, LargeN) {
  for (int64_t seed : {int64_t(0), int64_t(-3), (int64_t(1) << 33) + 5}) {
    expect_same(1000000, seed);
  }
}

}  // namespace
}  // namespace shardlens

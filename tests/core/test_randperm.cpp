// torch.randperm reproduction against vectors generated with real torch 1.13.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <utility>

#include "core/model/types.h"
#include "core/torchsem/randperm.h"

using namespace shardlens;

namespace {

// Made with real torch by scripts/make_reference_vectors.py.
constexpr const char* kReferenceVectors = SHARDLENS_TEST_DATA_DIR "/reference/vectors.json";

}  // namespace

TEST(Randperm, MatchesTorchReferenceVectors) {
  std::ifstream in(kReferenceVectors);
  ASSERT_TRUE(in) << kReferenceVectors << " cannot be read";
  const auto vectors = nlohmann::json::parse(in);
  ASSERT_GE(vectors["randperm"].size(), 6u);
  for (const auto& v : vectors["randperm"]) {
    const auto perm = randperm(v["n"].get<int64_t>(), v["seed"].get<int64_t>());
    const auto want = v["perm"].get<std::vector<uint32_t>>();
    EXPECT_EQ(perm, want) << "seed " << v["seed"] << " n " << v["n"];
  }
}

TEST(Randperm, DesignVectors) {
  EXPECT_EQ(randperm(10, 0), (std::vector<uint32_t>{4, 1, 7, 5, 3, 9, 0, 8, 6, 2}));
  EXPECT_EQ(randperm(7, 1), (std::vector<uint32_t>{0, 6, 1, 3, 5, 2, 4}));
}

TEST(Randperm, SeedKeepsLow32Bits) {
  EXPECT_EQ(randperm(50, int64_t{1} << 32 | 5), randperm(50, 5));
  EXPECT_EQ(randperm(50, -1), randperm(50, 0xFFFFFFFFll));
}

TEST(Randperm, IsAPermutationForManySizes) {
  for (int64_t n : {0, 1, 2, 3, 31, 32, 33, 1000, 4097}) {
    auto p = randperm(n, 1234);
    std::sort(p.begin(), p.end());
    std::vector<uint32_t> identity(static_cast<size_t>(n));
    std::iota(identity.begin(), identity.end(), 0u);
    EXPECT_EQ(p, identity) << n;
  }
}

// The blocked, prefetching loop must equal the textbook loop DESIGN describes.
TEST(Randperm, SwapLoopEqualsTextbookLoop) {
  for (int64_t n : {5, 64, 65, 1000}) {
    std::vector<uint32_t> want(static_cast<size_t>(n));
    std::iota(want.begin(), want.end(), 0u);
    std::mt19937 gen(99);
    for (int64_t i = 0; i < n - 1; ++i) {
      const auto z = static_cast<int64_t>(gen() % static_cast<uint32_t>(n - i));
      std::swap(want[i], want[i + z]);
    }
    std::vector<uint32_t> got(static_cast<size_t>(n));
    randperm_swap_loop(got.data(), n, 99);
    EXPECT_EQ(got, want) << n;
  }
}

// PyTorch >= 2.7 for n >= UINT32_MAX/20: inside-out shuffle with 64-bit draws.
TEST(Randperm, InsideOutLoopFollowsPyTorch27Definition) {
  const int64_t n = 1000;
  std::vector<uint32_t> want(static_cast<size_t>(n));
  std::mt19937 gen(7);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t first = gen();
    const uint64_t draw = (first << 32) | gen();
    const auto z = static_cast<size_t>(draw % static_cast<uint64_t>(i + 1));
    want[i] = want[z];
    want[z] = static_cast<uint32_t>(i);
  }
  std::vector<uint32_t> got(static_cast<size_t>(n));
  randperm_inside_out_loop(got.data(), n, 7);
  EXPECT_EQ(got, want);
  auto sorted = got;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(sorted[i], i);
}

TEST(Randperm, VersionSelectsLoopOnlyAboveThreshold) {
  // Below the threshold every version agrees.
  EXPECT_EQ(randperm(100, 3, TorchVersion::parse("2.7")),
            randperm(100, 3, TorchVersion::parse("1.13")));
  EXPECT_TRUE(TorchVersion::parse("2.7").has_large_randperm());
  EXPECT_TRUE(TorchVersion::parse("3.0").has_large_randperm());
  EXPECT_FALSE(TorchVersion::parse("2.6.1").has_large_randperm());
  EXPECT_FALSE(TorchVersion::parse("1.13").has_large_randperm());
}

TEST(Randperm, BadVersionStringsAreInputErrors) {
  for (const char* bad : {"", "2", "x.y", "2.", ".7", "0.4"}) {
    EXPECT_THROW(TorchVersion::parse(bad), InputError) << bad;
  }
  EXPECT_EQ(TorchVersion::parse("2.7.1+cu121").to_string(), "2.7");
}

// torch.__version__ as pip, conda, Debian and source builds print it.
TEST(Randperm, VersionTextsOfRealTorches) {
  const std::pair<const char*, const char*> cases[] = {
      {"2.15.0", "2.15"}, {"2.15.0+cu130", "2.15"},        {"2.15.0+cpu", "2.15"},
      {"1.13.1", "1.13"}, {"1.13.0a0+git49444c3", "1.13"}, {"2.8.0a0+gitabc", "2.8"},
      {"2.6rc1", "2.6"},  {"2.7.0.dev20250101", "2.7"},    {"10.2", "10.2"}};
  for (const auto& [text, want] : cases) EXPECT_EQ(TorchVersion::parse(text).to_string(), want);
  EXPECT_FALSE(TorchVersion::parse("2.6.0+cu124").has_large_randperm());
  EXPECT_TRUE(TorchVersion::parse("2.15.0+cu130").has_large_randperm());
  for (const char* bad : {"2.-1", "2.7-1", "v2.7", "2 .7", "2._"}) {
    EXPECT_THROW(TorchVersion::parse(bad), InputError) << bad;
  }
}

// What a run or a dump recorded: trimmed; empty or unreadable gives nothing (the default
// then applies) instead of refusing the user's file.
TEST(Randperm, RecordedVersions) {
  EXPECT_EQ(TorchVersion::parse_recorded(" 2.15.0+cu130\n"), TorchVersion::parse("2.15"));
  EXPECT_EQ(TorchVersion::parse_recorded("1.13.1"), TorchVersion::parse("1.13"));
  EXPECT_FALSE(TorchVersion::parse_recorded("").has_value());
  EXPECT_FALSE(TorchVersion::parse_recorded("   ").has_value());
  EXPECT_FALSE(TorchVersion::parse_recorded("unknown").has_value());
}

// The default is a current torch from pip, whose randperm takes the >= 2.7 loop at full size.
TEST(Randperm, DefaultIsACurrentTorch) {
  EXPECT_EQ(TorchVersion{}.to_string(),
            std::to_string(kDefaultTorchMajor) + "." + std::to_string(kDefaultTorchMinor));
  EXPECT_TRUE(TorchVersion{}.has_large_randperm());
}

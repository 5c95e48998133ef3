// torch.randperm reproduction against vectors generated with real torch 1.13.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "core/torchsem/randperm.h"
#include "core/vocabulary/block_mt19937.h"
#include "core/vocabulary/types.h"
#include "tests/common/test_rows.h"

using namespace shardlens;

namespace {

// Made with real torch by scripts/oracles/make_reference_vectors.py.
constexpr const char* kReferenceVectors = SHARDLENS_TEST_DATA_DIR "/reference/vectors.json";

// Read once, when the rows are made (before main); unreadable or not JSON gives no cases,
// which ReferenceVectorsAreThere reports.
const nlohmann::json& reference_vectors() {
  static const nlohmann::json vectors = [] {
    std::ifstream in(kReferenceVectors);
    nlohmann::json parsed = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? nlohmann::json{{"randperm", nlohmann::json::array()}} : parsed;
  }();
  return vectors;
}

std::string signed_name(int64_t v) {
  return v < 0 ? "minus" + std::to_string(-v) : std::to_string(v);
}

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
  for (const auto& v : reference_vectors()["randperm"])
    rows.push_back({"n" + v["n"].dump() + "_seed" + signed_name(v["seed"].get<int64_t>()), v});
  return shardlens::test::with_unique_names(std::move(rows));
}

class RandpermReference : public ::testing::TestWithParam<ReferenceRow> {};

// Sizes around the 32-element blocks of the swap loop.
std::string size_name(const ::testing::TestParamInfo<int64_t>& info) {
  return "n" + std::to_string(info.param);
}

class RandpermOfSize : public ::testing::TestWithParam<int64_t> {};
class SwapLoopOfSize : public ::testing::TestWithParam<int64_t> {};

}  // namespace

TEST(Randperm, ReferenceVectorsAreThere) {
  ASSERT_TRUE(std::ifstream(kReferenceVectors)) << kReferenceVectors << " cannot be read";
  EXPECT_GE(reference_vectors()["randperm"].size(), 6u);
}

TEST_P(RandpermReference, MatchesTorch) {
  const nlohmann::json& v = GetParam().vector;
  const auto perm = randperm(v["n"].get<int64_t>(), v["seed"].get<int64_t>());
  const auto want = v["perm"].get<std::vector<uint32_t>>();
  EXPECT_EQ(perm, want);
}

INSTANTIATE_TEST_SUITE_P(Vectors, RandpermReference, ::testing::ValuesIn(reference_rows()),
                         shardlens::test::NamedRow());

TEST(Randperm, DesignVectors) {
  EXPECT_EQ(randperm(10, 0), (std::vector<uint32_t>{4, 1, 7, 5, 3, 9, 0, 8, 6, 2}));
  EXPECT_EQ(randperm(7, 1), (std::vector<uint32_t>{0, 6, 1, 3, 5, 2, 4}));
}

TEST(Randperm, SeedKeepsLow32Bits) {
  EXPECT_EQ(randperm(50, int64_t{1} << 32 | 5), randperm(50, 5));
  EXPECT_EQ(randperm(50, -1), randperm(50, 0xFFFFFFFFll));
}

TEST_P(RandpermOfSize, IsAPermutation) {
  const int64_t n = GetParam();
  auto p = randperm(n, 1234);
  std::sort(p.begin(), p.end());
  std::vector<uint32_t> identity(static_cast<size_t>(n));
  std::iota(identity.begin(), identity.end(), 0u);
  EXPECT_EQ(p, identity);
}

INSTANTIATE_TEST_SUITE_P(ManySizes, RandpermOfSize,
                         ::testing::Values(0, 1, 2, 3, 31, 32, 33, 1000, 4097), size_name);

// The blocked, prefetching loop must equal the textbook loop written out here.
TEST_P(SwapLoopOfSize, EqualsTextbookLoop) {
  const int64_t n = GetParam();
  std::vector<uint32_t> want(static_cast<size_t>(n));
  std::iota(want.begin(), want.end(), 0u);
  std::mt19937 gen(99);
  for (int64_t i = 0; i < n - 1; ++i) {
    const auto z = static_cast<int64_t>(gen() % static_cast<uint32_t>(n - i));
    std::swap(want[i], want[i + z]);
  }
  std::vector<uint32_t> got(static_cast<size_t>(n));
  randperm_swap_loop(got.data(), n, 99);
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SwapLoopOfSize, ::testing::Values(5, 64, 65, 1000), size_name);

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

// The blocked, prefetching inside-out loop (blocks of 256, two 32-bit divisions) against the
// definition above, at sizes around its blocks.
class InsideOutLoopOfSize : public ::testing::TestWithParam<int64_t> {};

TEST_P(InsideOutLoopOfSize, EqualsTextbookLoop) {
  const int64_t n = GetParam();
  std::vector<uint32_t> want(static_cast<size_t>(n));
  std::mt19937 gen(12345);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t first = gen();
    const uint64_t draw = (first << 32) | gen();
    const auto z = static_cast<size_t>(draw % static_cast<uint64_t>(i + 1));
    want[i] = want[z];
    want[z] = static_cast<uint32_t>(i);
  }
  std::vector<uint32_t> got(static_cast<size_t>(n));
  randperm_inside_out_loop(got.data(), n, 12345);
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Sizes, InsideOutLoopOfSize, ::testing::Values(1, 2, 255, 256, 257, 70000),
                         size_name);

// The remainder by two 32-bit divisions against the 64-bit `%`.
struct ModRow {
  std::string name;
  uint32_t hi, lo, d;
};

void PrintTo(const ModRow& row, std::ostream* os) {
  *os << row.name;
}

class ModU64ByU32 : public ::testing::TestWithParam<ModRow> {};

TEST_P(ModU64ByU32, EqualsTheSixtyFourBitRemainder) {
  const ModRow& r = GetParam();
  const uint64_t x = (uint64_t{r.hi} << 32) | r.lo;
  EXPECT_EQ(mod_u64_by_u32(r.hi, r.lo, r.d), x % r.d);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ModU64ByU32,
    ::testing::Values(ModRow{"divisor_one", 0xFFFFFFFFu, 0xFFFFFFFFu, 1},
                      ModRow{"high_below_divisor", 5, 0x12345678u, 7},
                      ModRow{"high_above_divisor", 0xDEADBEEFu, 0xCAFEBABEu, 1000},
                      ModRow{"high_equals_divisor", 1000, 999, 1000},
                      ModRow{"largest_divisor", 0xFFFFFFFFu, 0xFFFFFFFEu, 0xFFFFFFFFu},
                      ModRow{"zero_draw", 0, 0, 214748365},
                      ModRow{"billion", 0x9E3779B9u, 0x7F4A7C15u, 1000000000}),
    [](const auto& info) { return info.param.name; });

// A watched draw says how far it got and stops when told to.
TEST(Randperm, WatchedDrawReportsAndCancels) {
  const int64_t n = 1 << 18;
  DrawWatch watch;
  {
    const ScopedDrawWatch scope(&watch);
    EXPECT_EQ(randperm(n, 3), randperm_nth(n, 3, 0));
  }
  EXPECT_GT(watch.done.load(), 0);
  EXPECT_LE(watch.done.load(), n);
  DrawWatch stopped;
  stopped.cancel = true;
  const ScopedDrawWatch scope(&stopped);
  EXPECT_THROW(randperm(n, 3), Cancelled);
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

namespace {

// torch.__version__ texts that name no version: one row each, named by what is wrong.
struct BadVersionRow {
  std::string name;
  const char* text;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const BadVersionRow& row, std::ostream* os) {
  *os << row.name;
}

class BadTorchVersion : public ::testing::TestWithParam<BadVersionRow> {};

}  // namespace

TEST_P(BadTorchVersion, IsAnInputError) {
  EXPECT_THROW(TorchVersion::parse(GetParam().text), InputError);
}

INSTANTIATE_TEST_SUITE_P(
    Texts, BadTorchVersion,
    ::testing::Values(BadVersionRow{"Empty", ""}, BadVersionRow{"MajorOnly", "2"},
                      BadVersionRow{"Letters", "x.y"}, BadVersionRow{"NoMinor", "2."},
                      BadVersionRow{"NoMajor", ".7"}, BadVersionRow{"BeforeOne", "0.4"},
                      BadVersionRow{"NegativeMinor", "2.-1"},
                      BadVersionRow{"DashAfterMinor", "2.7-1"}, BadVersionRow{"LeadingV", "v2.7"},
                      BadVersionRow{"SpaceInside", "2 .7"},
                      BadVersionRow{"UnderscoreMinor", "2._"}),
    shardlens::test::NamedRow());

TEST(Randperm, VersionTextKeepsMajorAndMinor) {
  EXPECT_EQ(TorchVersion::parse("2.7.1+cu121").to_string(), "2.7");
}

namespace {

// torch.__version__ as pip, conda, Debian and source builds print it.
struct VersionTextRow {
  std::string name;
  const char* text;
  const char* want;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const VersionTextRow& row, std::ostream* os) {
  *os << row.name;
}

class TorchVersionOfRealTorch : public ::testing::TestWithParam<VersionTextRow> {};

}  // namespace

TEST_P(TorchVersionOfRealTorch, IsMajorAndMinor) {
  EXPECT_EQ(TorchVersion::parse(GetParam().text).to_string(), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Texts, TorchVersionOfRealTorch,
                         ::testing::Values(VersionTextRow{"Pip", "2.15.0", "2.15"},
                                           VersionTextRow{"PipCuda", "2.15.0+cu130", "2.15"},
                                           VersionTextRow{"PipCpu", "2.15.0+cpu", "2.15"},
                                           VersionTextRow{"Debian", "1.13.1", "1.13"},
                                           VersionTextRow{"SourceBuild", "1.13.0a0+git49444c3",
                                                          "1.13"},
                                           VersionTextRow{"SourceAlpha", "2.8.0a0+gitabc", "2.8"},
                                           VersionTextRow{"ReleaseCandidate", "2.6rc1", "2.6"},
                                           VersionTextRow{"Nightly", "2.7.0.dev20250101", "2.7"},
                                           VersionTextRow{"TwoDigitMajor", "10.2", "10.2"}),
                         shardlens::test::NamedRow());

TEST(Randperm, LargeRandpermFromTheVersionText) {
  EXPECT_FALSE(TorchVersion::parse("2.6.0+cu124").has_large_randperm());
  EXPECT_TRUE(TorchVersion::parse("2.15.0+cu130").has_large_randperm());
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

// Float counter emulation against the compiler's own IEEE arithmetic.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "core/vocabulary/counter.h"
#include "core/vocabulary/types.h"
#include "tests/common/test_rows.h"

using namespace shardlens;

namespace {

// bfloat16 is float32 with the low 16 bits rounded away (to nearest, ties to even).
double bfloat16_reference(float x) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7FFFu + lsb;
  bits &= 0xFFFF0000u;
  return std::bit_cast<float>(bits);
}

// Values around float32's 24-bit mantissa, one row each.
struct Float32Row {
  std::string name;
  double value;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const Float32Row& row, std::ostream* os) {
  *os << row.name;
}

class Float32Counter : public ::testing::TestWithParam<Float32Row> {};

// One row per float dtype: the count where adding one no longer changes the counter.
struct StallRow {
  std::string name;
  CounterDtype dtype;
  double stall;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const StallRow& row, std::ostream* os) {
  *os << row.name;
}

class CounterStall : public ::testing::TestWithParam<StallRow> {};

// The 16-bit dtypes, one row each.
struct DtypeRow {
  std::string name;
  CounterDtype dtype;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const DtypeRow& row, std::ostream* os) {
  *os << row.name;
}

class SixteenBitCounter : public ::testing::TestWithParam<DtypeRow> {};

}  // namespace

TEST_P(Float32Counter, MatchesHardwareRounding) {
  const double v = GetParam().value;
  EXPECT_EQ(round_to_dtype(v, CounterDtype::Float32), static_cast<double>(static_cast<float>(v)));
}

INSTANTIATE_TEST_SUITE_P(Values, Float32Counter,
                         ::testing::Values(Float32Row{"TwoToThe24", 16777216.0},
                                           Float32Row{"TwoToThe24PlusOne", 16777217.0},
                                           Float32Row{"TwoToThe24PlusThree", 16777219.0},
                                           Float32Row{"TwoToThe25PlusThree", 33554435.0},
                                           Float32Row{"Fraction", 12345678.9},
                                           Float32Row{"One", 1.0}, Float32Row{"Zero", 0.0}),
                         shardlens::test::NamedRow());

TEST(Counter, Float16MatchesCompilerFloat16) {
  for (int i = 0; i <= 70000; i += 7) {
    const double v = i + 0.5 * (i % 3);
    const double want = static_cast<double>(static_cast<_Float16>(static_cast<float>(v)));
    EXPECT_EQ(round_to_dtype(v, CounterDtype::Float16), want) << v;
  }
}

TEST(Counter, BFloat16MatchesBitRounding) {
  for (int i = 0; i <= 100000; i += 13) {
    EXPECT_EQ(round_to_dtype(i, CounterDtype::BFloat16), bfloat16_reference(static_cast<float>(i)))
        << i;
  }
}

TEST_P(CounterStall, AddingOneStallsAtTheDocumentedCount) {
  const auto& [name, dtype, stall] = GetParam();
  EXPECT_EQ(stall_count(dtype), stall);
  EXPECT_EQ(round_to_dtype(stall + 1, dtype), stall);
  EXPECT_EQ(round_to_dtype(stall - 1, dtype), stall - 1);
}

INSTANTIATE_TEST_SUITE_P(FloatDtypes, CounterStall,
                         ::testing::Values(StallRow{"float16", CounterDtype::Float16, 2048.0},
                                           StallRow{"bfloat16", CounterDtype::BFloat16, 256.0},
                                           StallRow{"float32", CounterDtype::Float32, 16777216.0}),
                         shardlens::test::NamedRow());

TEST(Counter, Int64DoesNotStall) {
  EXPECT_EQ(round_to_dtype(1e18 + 1, CounterDtype::Int64), 1e18 + 1);
}

TEST(Counter, Float16OverflowsToInfinity) {
  EXPECT_EQ(round_to_dtype(65504, CounterDtype::Float16), 65504);
  EXPECT_TRUE(std::isinf(round_to_dtype(65520, CounterDtype::Float16)));
  EXPECT_EQ(round_to_dtype(65519, CounterDtype::Float16), 65504);
}

TEST(Counter, ParseNames) {
  EXPECT_EQ(parse_counter_dtype("bfloat16"), CounterDtype::BFloat16);
  EXPECT_THROW(parse_counter_dtype("half"), InputError);
}

// Every finite 16-bit pattern decodes to a value of its dtype that encodes back to itself,
// and positive patterns are ordered like their values (the IEEE layout).
TEST_P(SixteenBitCounter, PatternsRoundTrip) {
  const CounterDtype dtype = GetParam().dtype;
  double previous = -1;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const double v = from_bits16(uint16_t(bits), dtype);
    if (std::isnan(v)) continue;
    if (v != 0.0) {
      ASSERT_EQ(to_bits16(v, dtype), bits) << bits;
    }
    if (std::isfinite(v) && v != 0.0 && std::fabs(v) >= 1) {
      ASSERT_EQ(round_to_dtype(std::fabs(v), dtype), std::fabs(v)) << bits;
    }
    if (bits < 0x8000 && bits > 0) {
      ASSERT_GT(v, previous) << bits;
      previous = v;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SixteenBitCounter,
                         ::testing::Values(DtypeRow{"float16", CounterDtype::Float16},
                                           DtypeRow{"bfloat16", CounterDtype::BFloat16}),
                         shardlens::test::NamedRow());

TEST(Counter, SixteenBitKnownPatterns) {
  EXPECT_EQ(to_bits16(1.0, CounterDtype::Float16), 0x3c00);
  EXPECT_EQ(to_bits16(2048.0, CounterDtype::Float16), 0x6800);
  EXPECT_EQ(to_bits16(2049.0, CounterDtype::Float16), 0x6800);  // ties to even
  EXPECT_EQ(to_bits16(65504.0, CounterDtype::Float16), 0x7bff);
  EXPECT_EQ(to_bits16(1e6, CounterDtype::Float16), 0x7c00);
  EXPECT_EQ(to_bits16(std::ldexp(1.0, -24), CounterDtype::Float16), 0x0001);
  EXPECT_EQ(to_bits16(0.0, CounterDtype::Float16), 0x0000);
  EXPECT_EQ(to_bits16(1.0, CounterDtype::BFloat16), 0x3f80);
  EXPECT_EQ(to_bits16(257.0, CounterDtype::BFloat16), 0x4380);  // 256: ties to even
  EXPECT_EQ(from_bits16(0x4b00, CounterDtype::Float16), 14.0);
  EXPECT_EQ(from_bits16(0x4170, CounterDtype::BFloat16), 15.0);
  EXPECT_THROW(to_bits16(1.0, CounterDtype::Float32), std::invalid_argument);
}

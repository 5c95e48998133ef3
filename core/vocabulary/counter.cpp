#include "core/vocabulary/counter.h"

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

struct FloatFormat {
  int mantissa_bits;  // explicit fraction bits
  int max_exponent;   // largest unbiased exponent of a finite value
};

FloatFormat format_of(CounterDtype dtype) {
  switch (dtype) {
    case CounterDtype::Float16:
      return {10, 15};
    case CounterDtype::BFloat16:
      return {7, 127};
    default:
      return {23, 127};
  }
}

// Round-to-nearest-even onto a binary format with `mantissa_bits` fraction bits. Counts are
// far above the subnormal range, so only normal numbers matter.
double round_to_format(double value, FloatFormat f) {
  if (value == 0.0 || !std::isfinite(value)) return value;
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m * 2^exponent, m in [0.5, 1)
  const double ulp = std::ldexp(1.0, exponent - 1 - f.mantissa_bits);
  const double rounded = std::nearbyint(value / ulp) * ulp;  // FE_TONEAREST: ties to even
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, -f.mantissa_bits), f.max_exponent);
  // IEEE overflow: values at or beyond largest + ulp/2 round to infinity.
  const double halfway = largest + std::ldexp(1.0, f.max_exponent - f.mantissa_bits - 1);
  if (value >= halfway) return std::numeric_limits<double>::infinity();
  return rounded;
}

uint16_t float16_bits(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(value);
  if (std::isnan(value)) return 0x7e00;
  if (magnitude == 0.0) return sign;
  if (magnitude < std::ldexp(1.0, -14)) {  // subnormal: a multiple of 2^-24
    return uint16_t(sign | uint16_t(std::nearbyint(std::ldexp(magnitude, 24))));
  }
  const double rounded = round_to_format(magnitude, format_of(CounterDtype::Float16));
  if (std::isinf(rounded)) return uint16_t(sign | 0x7c00);
  int exponent = 0;
  const double m = std::frexp(rounded, &exponent);  // rounded = m * 2^exponent, m in [0.5, 1)
  const auto fraction = uint16_t(std::ldexp(m * 2.0 - 1.0, 10));
  return uint16_t(sign | uint16_t((exponent - 1 + 15) << 10) | fraction);
}

double float16_value(uint16_t bits) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int fraction = bits & 0x3ff;
  if (exponent == 0x1f) {
    return fraction ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  }
  if (exponent == 0) return sign * std::ldexp(double(fraction), -24);
  return sign * std::ldexp(1.0 + std::ldexp(double(fraction), -10), exponent - 15);
}

// bfloat16 is the upper half of a float32; the value is rounded first, so the lower half is 0.
uint16_t bfloat16_bits(double value) {
  if (std::isnan(value)) return 0x7fc0;
  const auto f = static_cast<float>(
      std::copysign(round_to_format(std::fabs(value), format_of(CounterDtype::BFloat16)), value));
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return uint16_t(u >> 16);
}

double bfloat16_value(uint16_t bits) {
  const uint32_t u = uint32_t(bits) << 16;
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

uint16_t to_bits16(double value, CounterDtype dtype) {
  if (dtype == CounterDtype::BFloat16) return bfloat16_bits(value);
  if (dtype == CounterDtype::Float16) return float16_bits(value);
  throw std::invalid_argument("to_bits16: " + to_string(dtype) + " is not a 16-bit float");
}

double from_bits16(uint16_t bits, CounterDtype dtype) {
  if (dtype == CounterDtype::BFloat16) return bfloat16_value(bits);
  if (dtype == CounterDtype::Float16) return float16_value(bits);
  throw std::invalid_argument("from_bits16: " + to_string(dtype) + " is not a 16-bit float");
}

double round_to_dtype(double value, CounterDtype dtype) {
  if (dtype == CounterDtype::Int64) return value;
  return round_to_format(value, format_of(dtype));
}

double stall_count(CounterDtype dtype) {
  if (dtype == CounterDtype::Int64) return 0;
  return std::ldexp(1.0, format_of(dtype).mantissa_bits + 1);
}

std::string to_string(CounterDtype dtype) {
  switch (dtype) {
    case CounterDtype::Int64:
      return "int64";
    case CounterDtype::Float32:
      return "float32";
    case CounterDtype::Float16:
      return "float16";
    case CounterDtype::BFloat16:
      return "bfloat16";
  }
  return "int64";
}

CounterDtype parse_counter_dtype(const std::string& text) {
  for (auto d : {CounterDtype::Int64, CounterDtype::Float32, CounterDtype::Float16,
                 CounterDtype::BFloat16}) {
    if (to_string(d) == text) return d;
  }
  throw InputError("--counter-dtype: '" + text +
                   "' is not one of int64, float32, float16, bfloat16");
}

}  // namespace shardlens

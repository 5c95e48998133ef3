#include "core/counter.h"

#include <cfenv>
#include <cmath>
#include <limits>

#include "core/types.h"

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

}  // namespace

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

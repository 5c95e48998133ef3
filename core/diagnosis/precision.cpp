#include "core/diagnosis/precision.h"

#include <algorithm>
#include <cmath>

namespace shardlens::detail {

double dtype_spacing(double value, CounterDtype dtype) {
  const double limit = stall_count(dtype);  // 2^(fraction bits + 1); 0 for int64
  if (limit == 0 || std::abs(value) < limit) return 1;
  int exponent = 0;
  std::frexp(std::abs(value), &exponent);  // |value| = m * 2^exponent, m in [0.5, 1)
  // 2^(exponent - 1) <= |value|, and the format has log2(limit) - 1 fraction bits.
  return std::ldexp(1.0, exponent - 1) / (limit / 2);
}

std::optional<CounterDtype> explaining_dtype(const std::vector<const Matrix*>& observed,
                                             const std::vector<CellDifference>& differences,
                                             double steps) {
  if (differences.empty()) return std::nullopt;
  for (CounterDtype d : {CounterDtype::BFloat16, CounterDtype::Float16, CounterDtype::Float32}) {
    const double limit = stall_count(d);
    const bool differences_fit =
        std::all_of(differences.begin(), differences.end(), [&](const CellDifference& c) {
          const double larger = std::max(std::abs(c.observed), std::abs(c.exact));
          return larger > limit &&
                 std::abs(c.observed - c.exact) <= steps * dtype_spacing(larger, d);
        });
    if (!differences_fit) continue;
    const bool representable = std::all_of(observed.begin(), observed.end(), [&](const Matrix* m) {
      return std::all_of(m->cells.begin(), m->cells.end(),
                         [&](double v) { return round_to_dtype(v, d) == v; });
    });
    if (representable) return d;
  }
  return std::nullopt;
}

}  // namespace shardlens::detail

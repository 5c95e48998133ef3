#include "core/diagnosis/row_check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace shardlens {

namespace {

bool whole(double v) {
  return std::isfinite(v) && v == std::floor(v);
}

// Cells at or past 2^62 are not summed in int64 (a sum of two could overflow it).
constexpr double kExactLimit = 4611686018427387904.0;  // 2^62

}  // namespace

bool sum_differs(double observed, double truth) {
  if (whole(observed) && whole(truth)) return observed != truth;
  return !(std::abs(observed - truth) <= kFractionTolerance * std::max(1.0, std::abs(truth)));
}

RowCheck check_rows(const std::vector<const Matrix*>& matrices, const std::vector<int64_t>& truth,
                    int32_t classes) {
  RowCheck out;
  const size_t rows = static_cast<size_t>(std::max(classes, 0));
  out.observed.assign(rows, 0.0);
  out.truth.assign(rows, 0);
  out.off.assign(rows, 0.0);
  out.wrong.assign(rows, false);
  for (size_t r = 0; r < rows; ++r) {
    // The double sum in the order Matrix::row_sums adds (what reports have always printed),
    // and beside it the exact sum while every cell is a whole number.
    double sum = 0;
    int64_t exact = 0;
    bool is_whole = true;
    for (const Matrix* m : matrices) {
      if (r >= static_cast<size_t>(m->classes)) continue;
      const double* row = m->cells.data() + r * static_cast<size_t>(m->classes);
      double row_sum = 0;
      for (int32_t k = 0; k < m->classes; ++k) {
        const double v = row[k];
        row_sum += v;
        if (!is_whole) continue;
        is_whole = whole(v) && std::abs(v) < kExactLimit &&
                   !__builtin_add_overflow(exact, static_cast<int64_t>(v), &exact);
      }
      sum += row_sum;
    }
    const int64_t t = r < truth.size() ? truth[r] : 0;
    int64_t difference = 0;
    is_whole = is_whole && !__builtin_sub_overflow(exact, t, &difference);
    out.observed[r] = sum;
    out.truth[r] = t;
    out.off[r] = is_whole ? static_cast<double>(difference) : sum - static_cast<double>(t);
    out.wrong[r] = is_whole ? difference != 0 : sum_differs(sum, static_cast<double>(t));
    if (out.wrong[r]) out.wrong_rows.push_back(static_cast<int32_t>(r));
  }
  out.by_error.resize(rows);
  std::iota(out.by_error.begin(), out.by_error.end(), 0);
  const auto error = [&](int32_t r) {
    const double off = out.off[size_t(r)];
    return std::isnan(off) ? std::numeric_limits<double>::infinity() : std::abs(off);
  };
  std::stable_sort(out.by_error.begin(), out.by_error.end(),
                   [&](int32_t a, int32_t b) { return error(a) > error(b); });
  return out;
}

RowCheck check_rows(const Matrix& m, const std::vector<int64_t>& truth) {
  return check_rows(std::vector<const Matrix*>{&m}, truth, m.classes);
}

}  // namespace shardlens

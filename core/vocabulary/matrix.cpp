#include "core/vocabulary/matrix.h"

#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "core/vocabulary/types.h"

namespace shardlens {

std::vector<double> Matrix::row_sums() const {
  std::vector<double> sums(static_cast<size_t>(classes), 0.0);
  for (int32_t r = 0; r < classes; ++r) {
    for (int32_t c = 0; c < classes; ++c) sums[r] += at(r, c);
  }
  return sums;
}

std::vector<double> Matrix::col_sums() const {
  std::vector<double> sums(static_cast<size_t>(classes), 0.0);
  for (int32_t r = 0; r < classes; ++r) {
    for (int32_t c = 0; c < classes; ++c) sums[c] += at(r, c);
  }
  return sums;
}

double Matrix::total() const {
  return std::accumulate(cells.begin(), cells.end(), 0.0);
}

double Matrix::diagonal_sum() const {
  double sum = 0;
  for (int32_t k = 0; k < classes; ++k) sum += at(k, k);
  return sum;
}

Matrix& Matrix::operator+=(const Matrix& other) {
  for (size_t i = 0; i < cells.size(); ++i) cells[i] += other.cells[i];
  return *this;
}

Matrix Matrix::scaled(double factor) const {
  Matrix out = *this;
  for (double& v : out.cells) v *= factor;
  return out;
}

void check_counts(const Matrix& m, const std::string& origin, const std::string& name,
                  Overflow overflow, Fractions fractions) {
  const size_t c = static_cast<size_t>(m.classes);
  const auto where = [&](size_t i) {
    return " at row " + std::to_string(i / c) + ", column " + std::to_string(i % c);
  };
  constexpr double kExact = 9007199254740992.0;  // 2^53: counts above are not exact
  double total = 0;
  for (size_t i = 0; i < m.cells.size(); ++i) {
    const double v = m.cells[i];
    if (overflow == Overflow::Kept && v == HUGE_VAL) continue;
    if (!std::isfinite(v))
      throw InputError(origin + ": '" + name + "' holds " +
                       (std::isnan(v) ? "NaN" : "an infinity") + where(i) +
                       ": counts must be finite");
    const auto value = [v] {
      std::ostringstream text;
      text << std::setprecision(17) << v;
      return text.str();
    };
    if (v < 0)
      throw InputError(origin + ": '" + name + "' holds " + value() + where(i) +
                       ": counts cannot be negative");
    if (fractions == Fractions::Refused && v != std::floor(v))
      throw InputError(origin + ": '" + name + "' holds " + value() + where(i) +
                       ": counts must be whole numbers");
    total += v;
    if (total >= kExact)
      throw InputError(origin + ": '" + name + "' holds " + value() + where(i) +
                       ": the counts' total passes 2^53, where counts are no longer exact");
  }
}

Matrix normalize(const Matrix& m, Normalization how) {
  if (how == Normalization::None) return m;
  Matrix out = m;
  const std::vector<double> rows = m.row_sums();
  const std::vector<double> cols = m.col_sums();
  const double total = m.total();
  for (int32_t r = 0; r < m.classes; ++r) {
    for (int32_t c = 0; c < m.classes; ++c) {
      const double d = how == Normalization::True   ? rows[r]
                       : how == Normalization::Pred ? cols[c]
                                                    : total;
      // torchmetrics replaces the NaN of 0 / 0 with 0.
      out.at(r, c) = d == 0.0 ? 0.0 : m.at(r, c) / d;
    }
  }
  return out;
}

std::string to_string(Normalization how) {
  switch (how) {
    case Normalization::None:
      return "none";
    case Normalization::True:
      return "true";
    case Normalization::Pred:
      return "pred";
    case Normalization::All:
      return "all";
  }
  return "none";
}

Normalization parse_normalization(const std::string& text) {
  for (auto n :
       {Normalization::None, Normalization::True, Normalization::Pred, Normalization::All}) {
    if (to_string(n) == text) return n;
  }
  throw InputError("--normalize: '" + text + "' is not one of none, true, pred, all");
}

}  // namespace shardlens

#include "core/model/matrix.h"

#include <numeric>

#include "core/model/types.h"

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

Matrix& Matrix::operator+=(const Matrix& other) {
  for (size_t i = 0; i < cells.size(); ++i) cells[i] += other.cells[i];
  return *this;
}

Matrix Matrix::scaled(double factor) const {
  Matrix out = *this;
  for (double& v : out.cells) v *= factor;
  return out;
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

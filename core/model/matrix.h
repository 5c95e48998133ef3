#pragma once
// A C x C confusion matrix: row = true class, column = predicted (torchmetrics orientation).
// Cells are doubles: counts stay exact (< 2^53) and normalized or float-counter values fit.
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/huge_pages.h"

namespace shardlens {

struct Matrix {
  int32_t classes = 0;
  std::vector<double> cells;  // row-major

  Matrix() = default;
  explicit Matrix(int32_t c) : classes(c) { assign_huge(cells, static_cast<size_t>(c) * c, 0.0); }
  double& at(int32_t row, int32_t col) { return cells[static_cast<size_t>(row) * classes + col]; }
  double at(int32_t row, int32_t col) const {
    return cells[static_cast<size_t>(row) * classes + col];
  }
  std::vector<double> row_sums() const;
  std::vector<double> col_sums() const;
  double total() const;
  bool operator==(const Matrix& other) const = default;
  Matrix& operator+=(const Matrix& other);
  Matrix scaled(double factor) const;
};

enum class Normalization { None, True, Pred, All };
// torchmetrics semantics: divide by row sums (true), column sums (pred) or the total (all);
// NaN from an empty row or column becomes 0.
Matrix normalize(const Matrix& m, Normalization how);
std::string to_string(Normalization how);
Normalization parse_normalization(const std::string& text);  // throws InputError

}  // namespace shardlens

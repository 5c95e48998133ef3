#pragma once
// A C x C confusion matrix: row = true class, column = predicted (torchmetrics orientation).
// Cells are doubles: counts stay exact (< 2^53) and normalized or float-counter values fit.
#include <cstdint>
#include <string>
#include <vector>

#include "core/vocabulary/huge_pages.h"

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
  double diagonal_sum() const;  // the correctly classified samples
  bool operator==(const Matrix& other) const = default;
  Matrix& operator+=(const Matrix& other);
  Matrix scaled(double factor) const;
};

// The one check of counts read from a file (a dump's or a run file's matrices): no NaN, no
// negative cell, and the finite cells' total exact in a double (below 2^53), so no report
// prints "nan", a negative count or a sum past int64. +infinity is a float16/float32
// counter's overflow: a run file keeps it as recorded (the simulation makes it too); a dump,
// whose counter is not known, refuses it. Throws InputError "ORIGIN: 'NAME' holds NaN at row
// r, column c: ..." (or -50, or a total past 2^53).
// Accumulated counts (a rank's matrix, the expected one) are whole numbers in every counter
// dtype; a reported matrix may hold fractions (the row-normalized matrices summed by a
// normalize-then-sum sync), so `fractions` says whether they are refused.
enum class Overflow { Refused, Kept };
enum class Fractions { Refused, Kept };
void check_counts(const Matrix& m, const std::string& origin, const std::string& name,
                  Overflow overflow, Fractions fractions = Fractions::Refused);

enum class Normalization { None, True, Pred, All };
// torchmetrics semantics: divide by row sums (true), column sums (pred) or the total (all);
// NaN from an empty row or column becomes 0.
Matrix normalize(const Matrix& m, Normalization how);
std::string to_string(Normalization how);
Normalization parse_normalization(const std::string& text);  // throws InputError

}  // namespace shardlens

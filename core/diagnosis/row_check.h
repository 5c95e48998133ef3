#pragma once
// "Is this row wrong?": each row of a reported matrix summed and compared with its class's
// true count. An evaluation's check is computed once, by complete_evaluation
// (`Evaluation::row_check`), and read by the diagnosis, the text and JSON reports, the row
// drift, the heatmaps' row marks and the charts; none of them sums rows or compares on its own.
// Counts are whole numbers and are compared exactly (summed in int64: a row of 10^15 off by one
// is wrong). Only a row holding fractions, such as a normalize-then-sum sync's matrix, is
// compared within kFractionTolerance.
#include <cstdint>
#include <vector>

#include "core/vocabulary/matrix.h"

namespace shardlens {

// Two sums of fractions are equal within kFractionTolerance * max(1, |the expected one|): what
// adding the same fractions in another order rounds to, far below any count. The diagnosis
// compares matrices that may hold fractions with the same tolerance.
inline constexpr double kFractionTolerance = 1e-9;

// Whether `observed` misses `truth`: exactly when both are whole numbers, else beyond
// kFractionTolerance. NaN and infinity miss every count.
bool sum_differs(double observed, double truth);

struct RowCheck {
  std::vector<double> observed;     // each row's sum, as reports print it
  std::vector<int64_t> truth;       // the true count of the row's class
  std::vector<double> off;          // observed - truth; exact for a row of whole numbers
  std::vector<bool> wrong;          // the row misses its count
  std::vector<int32_t> wrong_rows;  // the wrong rows, ascending
  std::vector<int32_t> by_error;    // every row, the largest |off| first, ties in class order

  int32_t rows() const { return static_cast<int32_t>(observed.size()); }
  bool is_wrong(int32_t row) const {
    return row >= 0 && static_cast<size_t>(row) < wrong.size() && wrong[size_t(row)];
  }
};

// The rows of `m` against `truth` (a class past its end counts 0).
RowCheck check_rows(const Matrix& m, const std::vector<int64_t>& truth);
// The rows of the sum of `matrices` (what the ranks counted together, for a run that never
// synchronized), `classes` rows.
RowCheck check_rows(const std::vector<const Matrix*>& matrices, const std::vector<int64_t>& truth,
                    int32_t classes);

}  // namespace shardlens

#pragma once
// Which float counter explains counts that differ from the exact ones (internal to the
// diagnosis). A float counter is exact up to 2^(mantissa bits + 1); past that every
// `state += bincount` (or every step of a float all_reduce) rounds to the nearest
// representable value, so a cell can land above its true count as well as below it.
#include <optional>
#include <vector>

#include "core/diagnosis/finding.h"
#include "core/vocabulary/counter.h"
#include "core/vocabulary/matrix.h"

namespace shardlens::detail {

// One cell whose observed value differs from the exact count.
using CellDifference = CellFact;

// Distance between neighbouring representable values of `dtype` at `value`.
double dtype_spacing(double value, CounterDtype dtype);

// The float dtype (bfloat16, float16, then float32) in which every value of `observed` is
// representable and past whose exact range every difference lies, each within `steps`
// roundings of the spacing there; nullopt when none explains them.
std::optional<CounterDtype> explaining_dtype(const std::vector<const Matrix*>& observed,
                                             const std::vector<CellDifference>& differences,
                                             double steps);

}  // namespace shardlens::detail

#include "core/runfile/sparse_matrix.h"

#include <algorithm>
#include <cmath>

#include "core/io/npy.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

[[noreturn]] void fail(const std::string& origin, const std::string& name,
                       const std::string& what) {
  throw InputError(origin + ": '" + name + "' " + what);
}

bool whole_int64(double v) {
  return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.2e18;
}

// A coordinate of row `k` (column `col` of [K, 3]) as an index in [0, classes).
int64_t coordinate(const DumpArray& a, size_t k, int col, int64_t classes, const std::string& name,
                   const std::string& origin) {
  const size_t at = k * 3 + size_t(col);
  const char* what = col == 0 ? "row" : "column";
  int64_t v = 0;
  if (a.integral) {
    v = a.ints[at];
  } else {
    const double d = a.reals[at];
    if (!(d == std::floor(d)) || std::fabs(d) > double(kMaxClasses))
      fail(origin, name,
           "gives the " + std::string(what) + " " + std::to_string(d) +
               " (not a class) in its entry " + std::to_string(k));
    v = int64_t(d);
  }
  if (v < 0 || v >= classes)
    fail(origin, name,
         "gives the " + std::string(what) + " " + std::to_string(v) + " in its entry " +
             std::to_string(k) + ", outside the " + std::to_string(classes) + " classes");
  return v;
}

}  // namespace

std::optional<std::string> sparse_matrix_npy(const Matrix& m) {
  const uint64_t cells = m.cells.size();
  if (cells < kSparseMinCells) return std::nullopt;
  // One pass: the nonzero cells' positions, given up as soon as they are a third of the cells.
  const uint64_t most = (cells - 1) / 3;  // 3 * k < cells
  std::vector<uint32_t> at;               // C * C - 1 fits (limits.h)
  bool integral = true;
  for (uint64_t i = 0; i < cells; ++i) {
    const double v = m.cells[i];
    if (v == 0) continue;
    if (at.size() == most) return std::nullopt;
    at.push_back(uint32_t(i));
    integral = integral && whole_int64(v);
  }
  const uint64_t c = uint64_t(m.classes);
  const std::vector<int64_t> shape = {int64_t(at.size()), 3};
  if (integral) {
    std::vector<int64_t> out(at.size() * 3);
    for (size_t k = 0; k < at.size(); ++k) {
      out[k * 3] = int64_t(at[k] / c);
      out[k * 3 + 1] = int64_t(at[k] % c);
      out[k * 3 + 2] = int64_t(m.cells[at[k]]);
    }
    return npy_bytes(out, shape);
  }
  std::vector<double> out(at.size() * 3);
  for (size_t k = 0; k < at.size(); ++k) {
    out[k * 3] = double(at[k] / c);
    out[k * 3 + 1] = double(at[k] % c);
    out[k * 3 + 2] = m.cells[at[k]];
  }
  return npy_bytes(out, shape);
}

Matrix matrix_from_sparse(const DumpArray& a, int64_t classes, const std::string& name,
                          const std::string& origin) {
  if (classes < 1 || classes > kMaxClasses)
    fail(origin, name,
         "is a matrix of " + std::to_string(classes) + " classes, outside 1 to " +
             std::to_string(kMaxClasses));
  const uint64_t cells = uint64_t(classes) * uint64_t(classes);
  if (a.shape.size() != 2 || a.shape[1] != 3)
    fail(origin, name, "is not an array [K, 3] of (row, column, value)");
  if (a.shape[0] < 0 || uint64_t(a.shape[0]) > cells)
    fail(origin, name,
         "lists " + std::to_string(a.shape[0]) + " cells of a " + std::to_string(classes) + " x " +
             std::to_string(classes) + " matrix");
  const size_t k = size_t(a.shape[0]);
  if (uint64_t(a.size()) != uint64_t(k) * 3)
    fail(origin, name,
         "holds " + std::to_string(a.size()) + " values for its shape [" + std::to_string(k) +
             ", 3]");
  check_load_budget(origin, cells * sizeof(double),
                    "its sparse '" + name + "' as a " + std::to_string(classes) + " x " +
                        std::to_string(classes) + " matrix");
  // Every listed cell is nonzero (what the writers list), so a cell already nonzero when its
  // entry comes is one given twice: found without sorting the entries.
  Matrix m(static_cast<int32_t>(classes));
  for (size_t i = 0; i < k; ++i) {
    const int64_t row = coordinate(a, i, 0, classes, name, origin);
    const int64_t col = coordinate(a, i, 1, classes, name, origin);
    const double v = a.integral ? double(a.ints[i * 3 + 2]) : a.reals[i * 3 + 2];
    const auto cell = [&] {
      return "the cell at row " + std::to_string(row) + ", column " + std::to_string(col);
    };
    double& out = m.cells[size_t(row * classes + col)];
    if (v == 0) fail(origin, name, "lists " + cell() + " as 0 (only nonzero cells are listed)");
    if (out != 0) fail(origin, name, "gives " + cell() + " twice");
    out = v;
  }
  return m;
}

}  // namespace shardlens

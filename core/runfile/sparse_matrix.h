#pragma once
// A C x C matrix stored as its nonzero cells: an array [K, 3] of (row, column, value), int64
// when every value is a whole number, float64 otherwise. Dumps and run files hold their
// matrices this way when it is smaller than the dense form (at 1000 classes a matrix of a
// validation's counts has a few thousand to a hundred thousand nonzero cells of a million),
// and both still read the dense form.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/runfile/dump_array.h"
#include "core/vocabulary/matrix.h"

namespace shardlens {

// Below this many cells a matrix stays dense whatever it holds: a small file keeps the
// form numpy.load shows as a matrix, and the sparse form saves nothing worth a second form.
inline constexpr uint64_t kSparseMinCells = 4096;

// The nonzero cells as .npy bytes of [K, 3] when they take fewer values than the dense
// matrix (3 a cell against C * C) and the matrix has at least kSparseMinCells cells; else
// nullopt. int64 when every cell is a whole number that fits, float64 otherwise (row and
// column then exact as doubles, C <= kMaxClasses).
std::optional<std::string> sparse_matrix_npy(const Matrix& m);

// The C x C matrix a [K, 3] array of nonzero cells gives, checked: the shape [K, 3] with
// K <= C * C, every row and column a whole number in [0, C), no cell given twice; the memory
// budget is charged for the dense matrix before it is allocated. The values are checked by
// the caller (check_counts), as a dense matrix's are. Throws InputError "ORIGIN: 'NAME' ...".
Matrix matrix_from_sparse(const DumpArray& cells, int64_t classes, const std::string& name,
                          const std::string& origin);

}  // namespace shardlens

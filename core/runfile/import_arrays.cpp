#include "core/runfile/import_arrays.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/io/npy.h"
#include "core/runfile/sparse_matrix.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/records.h"
#include "core/vocabulary/types.h"
#include "shardlens/dump_format.h"

namespace shardlens::dump_import {
namespace {

// Each array's names (its own, then the aliases users' code spells it with), from the dump
// format's schema (shardlens/dump_format.h).
const std::map<std::string, std::vector<std::string>>& aliases() {
  static const std::map<std::string, std::vector<std::string>> table = [] {
    std::map<std::string, std::vector<std::string>> out;
    for (const dump_format::ArraySpec& a : dump_format::arrays()) out[a.name] = a.names;
    return out;
  }();
  return table;
}

static_assert(dump_format::kFlagPadding == kPadding && dump_format::kFlagSanity == kSanity,
              "the schema's flag bits are the records' (core/vocabulary/records.h)");

// The arrays of one shape in the schema, e.g. every one-number array.
std::vector<std::string> arrays_shaped(dump_format::ArrayShape shape) {
  std::vector<std::string> out;
  for (const dump_format::ArraySpec& a : dump_format::arrays())
    if (a.shape == shape) out.push_back(a.name);
  return out;
}

// Values an array holds, from its shape (the same as size() once its values are read).
uint64_t shape_count(const DumpArray& a) {
  uint64_t n = 1;
  for (int64_t d : a.shape) n *= uint64_t(d);  // checked by the readers
  return n;
}

}  // namespace

void fail(const std::string& origin, const std::string& what) {
  throw InputError(origin + ": " + what);
}

const std::vector<std::string>& field_names(const std::string& field) {
  return aliases().at(field);
}

const DumpArray* find_field(const DumpArrays& arrays, const std::string& field,
                            const std::string& origin, std::string* name_found) {
  const DumpArray* found = nullptr;
  std::string found_name;
  for (const std::string& name : field_names(field)) {
    auto it = arrays.find(name);
    if (it == arrays.end()) continue;
    if (found) fail(origin, "both '" + found_name + "' and '" + name + "' given for " + field);
    found = &it->second;
    found_name = name;
  }
  if (found && name_found) *name_found = "array '" + found_name + "'";
  return found;
}

std::vector<int64_t> integers_of(const DumpArray& a, const std::string& name,
                                 const std::string& origin) {
  if (a.integral) return a.ints;
  std::vector<int64_t> out(a.reals.size());
  for (size_t i = 0; i < a.reals.size(); ++i) {
    const double v = a.reals[i];
    if (!(v == std::floor(v)) || std::fabs(v) > 9e15)
      fail(origin, "'" + name + "' holds the non-integer value " + std::to_string(v) + " at " +
                       std::to_string(i));
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

std::optional<int64_t> scalar_field(const DumpArrays& arrays, const std::string& field,
                                    const std::string& origin, int64_t lo, int64_t hi) {
  const DumpArray* a = find_field(arrays, field, origin);
  if (!a) return std::nullopt;  // one value: check_dump_shapes
  const int64_t v = integers_of(*a, field, origin)[0];
  if (v < lo || v > hi) fail(origin, "'" + field + "' = " + std::to_string(v) + " is out of range");
  return v;
}

Matrix matrix_of(const DumpArray& a, const std::string& name, const std::string& origin) {
  Matrix m;
  m.classes = static_cast<int32_t>(a.shape[0]);
  if (a.integral) {
    m.cells.assign(a.ints.begin(), a.ints.end());
  } else {
    m.cells = a.reals;
  }
  check_counts(m, origin, name, Overflow::Refused,
               name == "reported" ? Fractions::Kept : Fractions::Refused);
  return m;
}

namespace {

// The class count of the sparse matrices, when a sparse one is given (checked within
// [1, kMaxClasses] by check_dump_shapes once its value is read).
int64_t sparse_classes(const DumpArrays& arrays, const std::string& origin) {
  const DumpArray* a = find_field(arrays, "sparse_classes", origin);
  if (!a || a->size() != 1)
    fail(origin, "a sparse matrix needs 'sparse_classes' (its class count)");
  return integers_of(*a, "sparse_classes", origin)[0];
}

}  // namespace

std::optional<Matrix> dump_matrix(const DumpArrays& arrays, const std::string& field,
                                  const std::string& origin) {
  const Fractions fractions = field == "reported" ? Fractions::Kept : Fractions::Refused;
  if (const DumpArray* m = find_field(arrays, field, origin)) return matrix_of(*m, field, origin);
  const std::string sparse = field + "_sparse";
  const DumpArray* cells = find_field(arrays, sparse, origin);
  if (!cells) return std::nullopt;
  Matrix m = matrix_from_sparse(*cells, sparse_classes(arrays, origin), sparse, origin);
  check_counts(m, origin, sparse, Overflow::Refused, fractions);
  return m;
}

// Argmax over each row of [N, C] scores as torch.argmax and numpy.argmax take it: the first
// maximum, and NaN above every number (a row holding NaN predicts its first NaN; skipping
// NaN predicted another class than the run's own argmax did).
std::vector<int64_t> argmax_rows(const DumpArray& a, const std::string& origin) {
  const int64_t n = a.shape[0], c = a.shape[1];
  if (c < 1) fail(origin, "'prediction' scores have no classes");
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t k = 1; k < c; ++k) {
      const size_t at = size_t(i * c + k), at_best = size_t(i * c + best);
      const double v = a.integral ? double(a.ints[at]) : a.reals[at];
      const double b = a.integral ? double(a.ints[at_best]) : a.reals[at_best];
      if (std::isnan(b)) break;  // nothing is above the first NaN
      if (v > b || std::isnan(v)) best = k;
    }
    out[size_t(i)] = best;
  }
  return out;
}

void check_dump_shapes(const DumpArrays& arrays, const std::string& origin) {
  const DumpArray* index = find_field(arrays, "index", origin);
  const DumpArray* target = find_field(arrays, "target", origin);
  const DumpArray* prediction = find_field(arrays, "prediction", origin);
  if (!index || !target || !prediction) {
    fail(origin, "a dump needs arrays 'index', 'target' and 'prediction' (missing: " +
                     std::string(!index ? "index " : "") + (!target ? "target " : "") +
                     (!prediction ? "prediction" : "") + ")");
  }
  if (index->shape.size() != 1) fail(origin, "'index' is not a 1-D array");
  if (target->shape.size() != 1) fail(origin, "'target' is not a 1-D array");
  const uint64_t n = shape_count(*index);
  uint64_t preds = 0;
  if (prediction->shape.size() == 2 && !prediction->integral) {
    if (uint64_t(prediction->shape[0]) != n)
      fail(origin, "'prediction' scores do not have one row per index");
    preds = n;
  } else if (prediction->shape.size() == 1) {
    preds = shape_count(*prediction);
  } else {
    fail(origin, "'prediction' must be 1-D class ids or 2-D float scores");
  }
  if (shape_count(*target) != n || preds != n) {
    fail(origin, "index, target and prediction have different lengths (" + std::to_string(n) +
                     ", " + std::to_string(shape_count(*target)) + ", " + std::to_string(preds) +
                     ")");
  }
  // Every other one-value-per-record array of the schema (flags, ...).
  static const std::vector<std::string> per_record =
      arrays_shaped(dump_format::ArrayShape::Records);
  for (const std::string& key : per_record) {
    const DumpArray* a = find_field(arrays, key, origin);
    if (a && key != "index" && key != "target" && shape_count(*a) != n)
      fail(origin, "'" + key + "' has " + std::to_string(shape_count(*a)) + " entries for " +
                       std::to_string(n) + " records");
  }
  // The cells of samples of many counts: 1-D, one value per cell each (what a record's cells
  // are is cells_per_record's, checked once its values are read: dump_cells.h).
  static const std::vector<std::string> per_cell = arrays_shaped(dump_format::ArrayShape::Cells);
  std::string cell_lengths;
  std::optional<uint64_t> cells;
  bool cells_disagree = false;
  for (const std::string& key : per_cell) {
    const DumpArray* a = find_field(arrays, key, origin);
    if (!a) continue;
    if (a->shape.size() != 1) fail(origin, "'" + key + "' is not a 1-D array (one value per cell)");
    cells_disagree = cells_disagree || (cells && *cells != shape_count(*a));
    cells = shape_count(*a);
    cell_lengths += (cell_lengths.empty() ? "" : ", ") + key + " " + std::to_string(*cells);
  }
  if (cells_disagree) fail(origin, "the cell arrays have different lengths (" + cell_lengths + ")");
  if (const DumpArray* r = find_field(arrays, "rank", origin)) {
    const uint64_t count = shape_count(*r);
    if (count != n && !(count == 1 && n != 1))
      fail(origin, "'rank' is neither one number nor one per record");
  }
  static const std::vector<std::string> scalars = arrays_shaped(dump_format::ArrayShape::Scalar);
  for (const std::string& key : scalars) {
    if (const DumpArray* a = find_field(arrays, key, origin); a && shape_count(*a) != 1)
      fail(origin, "'" + key + "' must be a single number");
  }
  if (const DumpArray* a = find_field(arrays, "settings_json", origin);
      a && (a->shape.size() != 1 || !a->integral))
    fail(origin, "'settings_json' is not a 1-D uint8 array of UTF-8 JSON");
  static const std::vector<std::string> matrices = arrays_shaped(dump_format::ArrayShape::Matrix);
  for (const std::string& key : matrices) {
    const DumpArray* a = find_field(arrays, key, origin);
    if (a && (a->shape.size() != 2 || a->shape[0] != a->shape[1] || a->shape[0] < 1 ||
              a->shape[0] > kMaxClasses))
      fail(origin, "'" + key + "' is not a square C x C matrix");
    // A matrix given both ways: which one the run meant cannot be told.
    if (a && find_field(arrays, key + "_sparse", origin))
      fail(origin, "both '" + key + "' and '" + key + "_sparse' given");
  }
  // The sparse forms: [K, 3] of a C x C matrix, C known, K at most C * C.
  static const std::vector<std::string> sparse = arrays_shaped(dump_format::ArrayShape::Sparse);
  for (const std::string& key : sparse) {
    const DumpArray* a = find_field(arrays, key, origin);
    if (!a) continue;
    if (a->shape.size() != 2 || a->shape[1] != 3)
      fail(origin, "'" + key + "' is not an array [K, 3] of (row, column, value)");
    if (!find_field(arrays, "sparse_classes", origin))
      fail(origin, "'" + key + "' needs 'sparse_classes' (its class count)");
    if (uint64_t(a->shape[0]) > uint64_t(kMaxClasses) * uint64_t(kMaxClasses))
      fail(origin, "'" + key + "' lists more cells than a matrix has");
  }
  if (const DumpArray* c = find_field(arrays, "sparse_classes", origin);
      c && c->size() == 1 && shape_count(*c) == 1) {  // its value read (an .npz reads it first)
    const int64_t classes = integers_of(*c, "sparse_classes", origin)[0];
    if (classes < 1 || classes > kMaxClasses)
      fail(origin, "'sparse_classes' = " + std::to_string(classes) + " is out of range");
    for (const std::string& key : sparse)
      if (const DumpArray* a = find_field(arrays, key, origin);
          a && uint64_t(a->shape[0]) > uint64_t(classes) * uint64_t(classes))
        fail(origin, "'" + key + "' lists " + std::to_string(a->shape[0]) + " cells of a " +
                         std::to_string(classes) + " x " + std::to_string(classes) + " matrix");
  }
}

void check_values_fill_shapes(const DumpArrays& arrays, const std::string& origin) {
  for (const auto& [name, a] : arrays) {
    if (uint64_t(a.size()) != shape_count(a))
      fail(origin, "'" + name + "' holds " + std::to_string(a.size()) + " values for " +
                       std::to_string(shape_count(a)) + " in its shape");
  }
}

// What reading the arrays into a dump takes: each array's values as 64-bit numbers and the
// integer copy made of them, then one record (and its rank) per index.
uint64_t dump_memory(const DumpArrays& arrays, const std::string& origin) {
  uint64_t bytes = 0;
  for (const auto& [name, a] : arrays) bytes += shape_count(a) * 8 * 2;
  // A sparse matrix built dense, beside its cells' keys (counted above with its values).
  const DumpArray* classes = find_field(arrays, "sparse_classes", origin);
  if (classes && classes->size() == 1) {
    const uint64_t c =
        uint64_t(std::clamp<int64_t>(classes->ints.empty() ? 0 : classes->ints[0], 0, kMaxClasses));
    static const std::vector<std::string> sparse = arrays_shaped(dump_format::ArrayShape::Sparse);
    for (const std::string& key : sparse)
      if (find_field(arrays, key, origin)) bytes += c * c * sizeof(double);
  }
  const DumpArray* index = find_field(arrays, "index", origin);
  const uint64_t n = index ? shape_count(*index) : 0;
  // A dump's cells as read (DumpCells: two class ids of 8 bytes and a count of 4 a cell, an
  // offset a record) and as the run's table (CellTable: a key and a count, an offset a record).
  if (const DumpArray* counts = find_field(arrays, "cell_count", origin))
    bytes += shape_count(*counts) * (20 + 8) + n * 16;
  return bytes + n * (2 * sizeof(Record) + sizeof(int));
}

DumpArray array_from_npy(const std::string& bytes, const std::string& origin) {
  const NpyHeader header = parse_npy_header(bytes, origin);
  DumpArray a;
  const char kind = header.descr.size() >= 2 ? header.descr[1] : '?';
  if (kind == 'f') {
    a.integral = false;
    a.reals = npy_doubles_from_bytes(bytes, origin, &a.shape);
  } else {
    a.ints = npy_integers_from_bytes(bytes, origin, &a.shape);
  }
  return a;
}

void check_dump_version(const DumpArray& version, const std::string& origin) {
  if (version.size() != 1) fail(origin, "'format_version' must be a single number");
  const int64_t v = integers_of(version, "format_version", origin)[0];
  if (v < 1) fail(origin, "'format_version' = " + std::to_string(v) + " is not a format version");
  if (v > dump_format::kVersion)
    fail(origin, "dump format version " + std::to_string(v) +
                     " is newer than this ShardLens reads (" +
                     std::to_string(dump_format::kVersion) + "); update ShardLens");
}

}  // namespace shardlens::dump_import

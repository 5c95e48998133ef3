#pragma once
// A dump's arrays as the dump format names them (shardlens/dump_format.h), for the readers
// of the first stage of an import (import_read.h): each field found under any of its names,
// the arrays' shapes checked against each other (on an .npz's headers, before any data is
// inflated), and their values read as integers, class ids or matrices.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/runfile/dump_array.h"
#include "core/vocabulary/matrix.h"

// The pieces of an import, stage by stage (import.h runs them in order).
namespace shardlens::dump_import {

// Throws InputError "ORIGIN: WHAT": every refusal of an import names the file it concerns.
[[noreturn]] void fail(const std::string& origin, const std::string& what);

// A field's names: its own, then the aliases users' code spells it with.
const std::vector<std::string>& field_names(const std::string& field);

// The array given for `field` under any of its names (null when none); two names given for
// one field are refused. *name_found says which ("array 'labels'").
const DumpArray* find_field(const DumpArrays& arrays, const std::string& field,
                            const std::string& origin, std::string* name_found = nullptr);

// An array's values as integers (a float array only when every value is whole).
std::vector<int64_t> integers_of(const DumpArray& a, const std::string& name,
                                 const std::string& origin);

// A one-number field's value within [lo, hi], when given.
std::optional<int64_t> scalar_field(const DumpArrays& arrays, const std::string& field,
                                    const std::string& origin, int64_t lo, int64_t hi);

// A C x C array (its shape checked by check_dump_shapes) as a matrix of finite counts.
Matrix matrix_of(const DumpArray& a, const std::string& name, const std::string& origin);

// The matrix `field` ("matrix" or "reported") as given: dense under any of its names, or as
// its nonzero cells ("<field>_sparse" with "sparse_classes"); nullopt when neither is given.
// Checked as matrix_of checks a dense one (the sparse form also as matrix_from_sparse does).
std::optional<Matrix> dump_matrix(const DumpArrays& arrays, const std::string& field,
                                  const std::string& origin);

// The class each row of [N, C] scores predicts, as torch.argmax and numpy.argmax take it.
std::vector<int64_t> argmax_rows(const DumpArray& a, const std::string& origin);

// A dump of a newer format than this build reads is refused before anything else is
// checked: its other arrays may mean something else. A dump without the array is version 1.
void check_dump_version(const DumpArray& version, const std::string& origin);

// Every check on the arrays' shapes, the one place that makes them: run on the .npy headers
// of an .npz before any data is inflated, so an array that disagrees with the others costs
// nothing however large it claims to be, and on arrays read whole.
void check_dump_shapes(const DumpArrays& arrays, const std::string& origin);

// Every array holds the values its shape says (true of arrays read from .npy; checked for
// any other source), so the shape checks hold for the values too.
void check_values_fill_shapes(const DumpArrays& arrays, const std::string& origin);

// What reading the arrays into a dump takes, in bytes, from their shapes alone (and the value
// of sparse_classes, read first: a sparse matrix takes C x C cells once built).
uint64_t dump_memory(const DumpArrays& arrays, const std::string& origin);

// One .npy member's bytes as an array.
DumpArray array_from_npy(const std::string& bytes, const std::string& origin);

}  // namespace shardlens::dump_import

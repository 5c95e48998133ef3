#pragma once
// The third stage of an import (import.h): what the dumps of one evaluation must satisfy
// before its run is built (import_build.h), checked against their layout (import_layout.h),
// each refusal naming the file, the option or the value at fault. The checks of one dump's
// own arrays run as it is read (import_arrays.h).
#include <vector>

#include "core/runfile/import_layout.h"

namespace shardlens::dump_import {

// A dump without records reads as an exact evaluation of nothing: refused, naming each.
void refuse_empty_dumps(const std::vector<RankDump>& dumps);

// In this order: the matrices the classes imply within their limit, every record within the
// run's bounds and agreeing with the dataset, each dump's dataset size and matrices fitting,
// no index beyond a declared dataset size, the evaluation within the memory budget, and a
// dump for every rank (last, so a broken dump is reported as such, not as a gap).
void check_layout(const std::vector<RankDump>& dumps, const ImportOptions& options,
                  const ImportLayout& layout);

}  // namespace shardlens::dump_import

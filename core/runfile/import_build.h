#pragma once
// The last stage of an import (import.h): the run an evaluation's checked layout
// (import_layout.h, import_checks.h) makes, with its cells, its class counts and its matrices.
#include "core/runfile/import_layout.h"
#include "core/runfile/runfile.h"

namespace shardlens::dump_import {

// The run: the layout's metadata and records, the true class counts (the dataset's, else the
// distinct samples seen), a matrix per rank counted from its records unless a dump gave its
// own, the synced one as the lowest rank reported it (else the sum of the ranks'), and the
// expected one when every prediction is known.
RunFile build_run(ImportLayout layout);

// The dumps' cells (a task of many counts) as the run's one CellTable, a row per record in
// the order merge_ranks numbered them, the ignore_index cells left out; each record's target
// and prediction become its sample's largest true and predicted class (CellTable::dominant).
// Run after check_layout: the cells' class ids are within the run's classes.
void gather_cells(const std::vector<RankDump>& dumps, ImportLayout& layout);

}  // namespace shardlens::dump_import

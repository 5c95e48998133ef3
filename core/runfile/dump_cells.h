#pragma once
// The cells of a dump whose samples count many (dump format 3, docs/FORMATS.md): an image's
// (true, predicted) pixel histogram, a sequence's tokens, a multilabel item's 2 x 2 cell per
// label. Read from the arrays cells_per_record, cell_target, cell_prediction and cell_count
// (.npz, .pt) or from a CSV's `count` column, and checked as they are read: a histogram whose
// total is not the sample's size, a count that is not positive or that a matrix of doubles
// would not add exactly, a cell given twice in a sample, counts that do not add up to the cell
// arrays' length are refused naming the file, the record and the value. Class ids are checked
// once the run's classes are known (import_checks.h), and the cells become the run's one
// CellTable when it is built (import_build.h).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/runfile/dump_array.h"
#include "core/vocabulary/records.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens {

// One dump's cells, record by record in the order of its records.
struct DumpCells {
  std::vector<uint64_t> offsets{0};  // record i's cells: [offsets[i], offsets[i + 1])
  std::vector<int64_t> target;       // as given; a target equal to ignore_index is not counted
  std::vector<int64_t> prediction;
  std::vector<uint32_t> count;
  // Where each came from, for messages: "array 'cell_target'", "column 'count'".
  std::array<std::string, 3> keys;
  int64_t total = 0;  // every count added up (at most kMaxExactCount)

  int64_t records() const { return int64_t(offsets.size()) - 1; }
  size_t cells() const { return count.size(); }
};

namespace dump_import {

// The largest count a matrix of doubles adds up exactly, one at a time: 2^53.
inline constexpr int64_t kMaxExactCount = int64_t(1) << 53;

// Which of a cell's values a message names.
enum class CellField { Target, Prediction, Count };

// "ORIGIN: record 3 of rank 1 (dataset index 17)": the sample a message is about.
std::string sample_place(const std::string& origin, int64_t position, int64_t rank, int64_t index);

// The task a dump's settings_json names (nullopt: not said, or null). An unknown one is
// refused naming the file and the text.
std::optional<Task> task_named(const std::optional<std::string>& text, const std::string& origin);

// The cells of a dump's `ranks.size()` records (file order) from its arrays; nullopt when it
// holds none of the cell arrays and `task` is not one of many counts. Refuses: some of the
// cell arrays without the others, cell arrays in a classification dump or missing from a dump
// of another task, float arrays, cells_per_record negative or not adding up to the cell
// arrays' length, counts not in [1, 2^32 - 1], a cell given twice in a record, sample_size or
// ignored out of range or not adding up with the cells, a multilabel cell that mixes two
// labels, a label given twice or a count other than 1, and counts past 2^53 in all.
std::optional<DumpCells> cells_from_arrays(const DumpArrays& arrays, const std::string& origin,
                                           std::optional<Task> task,
                                           const std::vector<int64_t>& ranks,
                                           const std::vector<int64_t>& index);

// A CSV's rows of cells, one per row (the `count` column), grouped into records: by the
// `record` column (the record's ordinal within its rank) when there is one, else consecutive
// rows of one rank and index. Every row of a record has its rank, index and flags.
struct CellRows {
  std::vector<int64_t> rank, index, target, prediction, flags, count;
  std::vector<int64_t> record;  // empty: group consecutive rows
  std::vector<size_t> lines;    // each row's line in the file
  std::array<std::string, 3> keys;
};
struct GroupedCells {
  std::vector<int64_t> rank, index, flags;  // one per record
  DumpCells cells;
};
GroupedCells group_cell_rows(const CellRows& rows, const std::string& origin);

// A dump's cells against the run they are imported into: every target in [0, classes) or the
// ignore_index, every prediction in [0, classes); for multilabel, each cell (2l + t, 2l + p)
// within one label, counting 1, and each label once a record. `ranks` and `records` are the
// dump's (RankDump), naming the record a refusal is about.
void check_cells_in_run(const DumpCells& cells, const std::string& origin,
                        const std::vector<int>& ranks, const std::vector<Record>& records,
                        int32_t classes, int ignore_index, Task task);

// Appends one row per record of `cells` to `table` (its classes set), leaving out the cells
// whose target is ignore_index (not counted, as torchmetrics leaves them out). Returns the
// first row added.
int64_t append_cell_rows(const DumpCells& cells, CellTable& table, int ignore_index);

// Drops the cells of records whose flags say PAD_ROW (rows pad_across_processes added, which
// the records leave out), so the cells stay one row per kept record.
void drop_pad_rows(DumpCells& cells, const std::vector<int64_t>& flags);

}  // namespace dump_import
}  // namespace shardlens

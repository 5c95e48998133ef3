#pragma once
// The first stage of an import (import.h): every dump file read into a RankDump, whatever its
// format, and the dataset the user named. Formats:
//   .npz  arrays index, target, prediction [, rank] [, flags] [, matrix] [, reported]
//         [, world_size] [, dataset_size] [, batch_size] [, epoch] [, sanity]
//         [, validation_in_epoch] [, dataloader_idx] [, settings_json] (what
//         integrations/python writes; settings_json is UTF-8 JSON in a uint8 array, read by
//         parse_recorded_settings)
//   .npy  one integer array [N, 4] or [N, 5]: columns rank, index, target, prediction [, flags]
//   .csv  columns rank, index, target, prediction [, flags] (a header names them; without one
//         they are taken in that order); with a `count` column every row is one cell of a
//         sample, grouped into records by a `record` column or by consecutive rank and index
//   cells (.npz, .pt) cells_per_record, cell_target, cell_prediction, cell_count [,
//         sample_size] [, ignored]: a sample of many counts (dump_cells.h)
//   .pt   a dict of tensors saved with torch.save (same keys as .npz), read by LibTorch
//         through ImportOptions::pt_reader when the build has it.
// Without a rank array the rank comes from the file name ("...rank3..."). A 2-D float
// prediction [N, C] is taken as scores and reduced by argmax (first maximum).
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset/dense_synthetic.h"
#include "core/dataset/labels.h"
#include "core/evaluation/recorded_settings.h"
#include "core/runfile/dump_array.h"
#include "core/runfile/dump_cells.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/progress.h"
#include "core/vocabulary/records.h"

namespace shardlens {

// DumpArray, DumpArrays: one array of a dump, whatever file it came from (dump_array.h).

// What one dump file holds. Records keep their order within each rank.
struct RankDump {
  std::string origin;
  std::vector<int> ranks;  // rank of every record
  std::vector<Record> records;
  // Rows accelerator.pad_across_processes added (flag PAD_ROW): no samples, left out of
  // `records` and counted here.
  int64_t pad_rows = 0;
  // Where each value of the records came from (by RecordField: "array 'labels'", "column 2"),
  // named by the checks of their bounds.
  std::array<std::string, 5> record_keys;
  std::optional<int> world_size;
  std::optional<int64_t> dataset_size;
  std::optional<int64_t> batch_size;
  std::optional<Matrix> rank_matrix;  // the rank's own accumulated matrix (one-rank dumps)
  std::optional<Matrix> reported;     // the matrix the run reported
  std::optional<int64_t> epoch;       // the epoch evaluated (an `epoch` array or the file name)
  bool sanity = false;                // a Lightning sanity-check dump (`sanity` = 1)
  // Which evaluation of the epoch (arrays, else settings_json): Lightning's stage, the
  // validation within the epoch and the validation dataloader.
  std::string stage;
  std::optional<int64_t> validation_in_epoch;
  std::optional<int64_t> dataloader_idx;
  std::optional<RecordedSettings> settings;  // settings_json, when recorded
  // What a record counts: the task settings_json names (nullopt: not said), and the cells of
  // a dump whose samples count many (one row per record of `records`; dump_cells.h). The
  // records' target and prediction of such a dump are recomputed from their cells.
  std::optional<Task> task;
  std::optional<DumpCells> cells;
};

// Interprets named arrays (from .npz or .pt); throws InputError naming `origin`.
RankDump dump_from_arrays(const DumpArrays& arrays, const std::string& origin);
RankDump read_npz_dump(const std::string& path);
RankDump read_npy_dump(const std::string& path);
RankDump read_csv_dump(const std::string& path);

// What an import is told besides the dumps (every stage reads it).
struct ImportOptions {
  std::string dataset;             // spec; gives true class counts and checks targets
  std::string predictions;         // .npy/.csv, one prediction per dataset index (needs dataset)
  std::optional<int32_t> classes;  // class count when no dataset is given
  std::optional<int> world_size;   // when the dumps do not say
  int ignore_index = -1;
  // What a record counts, when the dumps do not say (a CSV of cells: segmentation unless
  // told); a dump that says another task is refused.
  std::optional<Task> task;
  // Reads a .pt dump into arrays (LibTorch); empty in builds without it.
  std::function<DumpArrays(const std::string& path)> pt_reader;
};

namespace dump_import {

// Every dump, read by its extension, in the order given; a dump without an `epoch` array
// takes the epoch its file name says ("eval_epoch2_rank3.npz").
std::vector<RankDump> read_dumps(const std::vector<std::string>& paths,
                                 const ImportOptions& options, Progress* progress);

// The rank a file name says ("dump_rank3.npz"), for a dump without a `rank` array.
std::optional<int> rank_from_name(const std::string& path);

// What the dataset says, when given: its labels and (--predictions) every prediction.
struct DatasetTruth {
  std::optional<Labels> labels;
  std::optional<std::vector<int32_t>> predictions;
  // A dataset of samples of many counts (dense_synthetic.h: voc2012:val, conll2003:test, ...):
  // each sample's true cells, which give the true pixel / token / label counts and which each
  // record's cells must agree with. `labels` then holds each sample's largest true class.
  std::optional<DenseTruth> dense;
};
DatasetTruth read_dataset_truth(const ImportOptions& options);

}  // namespace dump_import

}  // namespace shardlens

#pragma once
// Imports of per-rank dumps from users' own evaluations into a run file. Formats:
//   .npz  arrays index, target, prediction [, rank] [, flags] [, matrix] [, reported]
//         [, world_size] [, dataset_size] [, batch_size] [, epoch] [, sanity]
//         [, validation_in_epoch] [, dataloader_idx] [, settings_json] (what
//         integrations/python writes; settings_json is UTF-8 JSON in a uint8 array, read by
//         parse_recorded_settings)
//   .npy  one integer array [N, 4] or [N, 5]: columns rank, index, target, prediction [, flags]
//   .csv  columns rank, index, target, prediction [, flags] (a header names them; without one
//         they are taken in that order)
//   .pt   a dict of tensors saved with torch.save (same keys as .npz), read by LibTorch
//         through ImportOptions::pt_reader when the build has it.
// Without a rank array the rank comes from the file name ("...rank3..."). A 2-D float
// prediction [N, C] is taken as scores and reduced by argmax (first maximum).
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluation/recorded_settings.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/progress.h"
#include "core/vocabulary/records.h"
#include "core/runfile/dump_array.h"
#include "core/runfile/runfile.h"

namespace shardlens {

// DumpArray, DumpArrays: one array of a dump, whatever file it came from (dump_array.h).

// What one dump file holds. Records keep their order within each rank.
struct RankDump {
  std::string origin;
  std::vector<int> ranks;  // rank of every record
  std::vector<Record> records;
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
};

// Interprets named arrays (from .npz or .pt); throws InputError naming `origin`.
RankDump dump_from_arrays(const DumpArrays& arrays, const std::string& origin);
RankDump read_npz_dump(const std::string& path);
RankDump read_npy_dump(const std::string& path);
RankDump read_csv_dump(const std::string& path);

struct ImportOptions {
  std::string dataset;             // spec; gives true class counts and checks targets
  std::string predictions;         // .npy/.csv, one prediction per dataset index (needs dataset)
  std::optional<int32_t> classes;  // class count when no dataset is given
  std::optional<int> world_size;   // when the dumps do not say
  int ignore_index = -1;
  // Reads a .pt dump into arrays (LibTorch); empty in builds without it.
  std::function<DumpArrays(const std::string& path)> pt_reader;
};

// Reads every dump (by extension), merges them by rank and builds a run: per-rank matrices
// recomputed from the records unless a one-rank dump provides its own, the synced matrix
// taken from a dump's `reported` array or else the sum of the per-rank matrices.
RunFile import_dumps(const std::vector<std::string>& paths, const ImportOptions& options,
                     Progress* progress = nullptr);
RunFile import_dumps(const std::vector<RankDump>& dumps, const ImportOptions& options);

// Dumps of several evaluations: one run per (stage, epoch, validation_in_epoch,
// dataloader_idx) (an `epoch` array or "epoch<e>" in the file name; the others from their
// arrays or settings_json), in run order (runfile.h: evaluation_before), each imported as
// above. Sanity-check dumps are left out (noted). A validation or dataloader number is kept
// only when the run has more than one of them.
struct ImportedRun {
  std::vector<RunFile> epochs;
  std::vector<std::string> notes;
};
ImportedRun import_epochs(const std::vector<std::string>& paths, const ImportOptions& options,
                          Progress* progress = nullptr);

}  // namespace shardlens

#pragma once
// Imports of per-rank dumps from users' own evaluations into a run file, stage by stage:
//   read    every dump file into a RankDump, the dataset named (import_read.h: the formats,
//           RankDump, ImportOptions; a dump's arrays in import_arrays.h)
//   layout  the evaluations the dumps hold, and for each its world size, which dump holds
//           each rank, its classes and dataset size (import_layout.h)
//   check   the dumps against that layout and the memory budget (import_checks.h)
//   build   the run: its class counts and matrices (import_build.h)
#include <string>
#include <vector>

#include "core/runfile/import_read.h"
#include "core/runfile/runfile.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

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
// What an imported run holds, as the import says it: "segmentation dump: 1,449 images
// (1,452 records), 21 classes, 262,144,000 pixels counted"; "classification dump: 10,000
// samples, 10 classes". Samples are the distinct dataset indices the records name; counted
// is every record's cells (duplicates included), the ignore_index left out.
std::string dump_kind_text(const RunFile& run);

struct ImportedRun {
  std::vector<RunFile> epochs;
  std::vector<std::string> notes;
};
ImportedRun import_epochs(const std::vector<std::string>& paths, const ImportOptions& options,
                          Progress* progress = nullptr);

}  // namespace shardlens

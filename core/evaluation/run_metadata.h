#pragma once
// What a run file records about one evaluation besides its records and matrices: where it
// came from, its scenario, classes, dataset, which evaluation of the run it is and how it
// ended. One struct, held by `Evaluation` (core/evaluation/evaluation.h) and by `RunFile`
// (core/runfile/runfile.h), written to and read from meta.json through one field table
// (core/runfile/runfile.cpp). A new field is a member here and a row in that table.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluation/recorded_settings.h"
#include "core/evaluation/scenario.h"
#include "core/evaluation/synced_origin.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens {

struct RunMetadata {
  int format_version = 1;             // of meta.json (core/runfile/runfile.h: kRunFormatVersion)
  std::string source = "simulated";   // "simulated", "real", "imported"
  std::string backend = "simulated";  // "simulated", "gloo", "nccl", "import"
  std::string torch_version;          // torch semantics imitated, or the real one used
  std::string created_by;             // the program that wrote the run file ("ShardLens 0.1.0")
  // As simulated or recorded with the run; absent for imports of foreign dumps (an
  // Evaluation then shows a stand-in: Evaluation::scenario()).
  std::optional<Scenario> scenario;
  int32_t classes = 0;
  // What one sample counts (core/vocabulary/sample_cells.h): a class per sample, or an
  // image's pixels, a sequence's tokens, a multilabel item's 2 x 2 cell per label. The class
  // counts are then pixels, tokens or label decisions; dataset_size stays in samples.
  Task task = Task::Classification;
  // Empty, or one per class. An Evaluation always holds one per class (the number as text
  // when unnamed); a run file stores none when they are only the numbers.
  std::vector<std::string> class_names;
  std::vector<int64_t> class_counts;            // true count of each class
  std::string class_counts_source = "dataset";  // or "distinct-records" (an estimate)
  int64_t dataset_size = 0;
  std::string dataset;           // the dataset spec, when known (for images and subsets)
  std::optional<int64_t> epoch;  // the epoch evaluated (the sampler's set_epoch), when known
  // Which evaluation of the epoch, when the run had several: Lightning's stage ("validate",
  // "test"), the validation within the epoch (val_check_interval) and the validation
  // dataloader.
  std::string stage;
  std::optional<int64_t> validation_in_epoch;
  std::optional<int64_t> dataloader_idx;
  // The settings the recorder saw in the user's own run (`settings_json` of the dumps).
  std::optional<RecordedSettings> recorded;
  int world_size = 0;
  std::optional<int64_t> batch_size;
  int ignore_index = -1;
  bool complete = true;
  std::string incomplete_reason;  // why, when not complete (e.g. "rank 2 failed: ...")
  std::vector<int> failed_ranks;
  // Imports: the ranks whose matrix a dump provided (its own accumulated matrix, in whatever
  // counter it kept) rather than counted from its records. Set by every import, empty when
  // no dump gave one; absent in other runs and in imports written before it was recorded.
  // A rank not listed has its matrix checked against its records when the file is read.
  std::optional<std::vector<int>> provided_matrices;
  // Who started a real run's ranks: "shardlens" (its own launcher), "torchrun", "env",
  // "slurm", "openmpi" or "pmi" (core/platform/launcher_env.h); empty for other sources.
  std::string launcher;
  std::string sync_note;  // set when a real run's sync could not use the wire as asked
  // Where the synced matrix came from (core/evaluation/synced_origin.h); Unknown in run files
  // written before it was recorded, where synced_origin_of() falls back on `source`.
  SyncedOrigin synced_origin = SyncedOrigin::Unknown;
};

}  // namespace shardlens

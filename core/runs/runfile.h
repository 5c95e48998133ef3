#pragma once
// Run files (.slrun): one evaluation (simulated, real or imported) with its per-rank
// records and matrices. The file is a NumPy .npz (a ZIP of .npy members plus meta.json),
// so `numpy.load(path)` opens it; members:
//   meta.json                      format, scenario, classes, world size, backend, checksums
//   rank{r}_index / _target / _prediction / _flags   1-D arrays, one entry per record
//   rank{r}_matrix                 [C, C] the rank's accumulated matrix
//   synced                         [C, C] the reported matrix (absent in an incomplete run
//                                  that failed before synchronizing)
//   expected                       [C, C] when every prediction is known (simulations)
//   rank{r}_reported               [C, C] what rank r reported itself, when recorded
// Matrices are int64 when every cell is a finite integer, float64 otherwise.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnosis/diagnosis.h"
#include "core/evaluation/recorded_settings.h"
#include "core/evaluation/scenario.h"
#include "core/model/matrix.h"
#include "core/model/records.h"

namespace shardlens {

inline constexpr int kRunFormatVersion = 1;
// Several epochs in one file: a top-level meta.json lists them, and each epoch's members
// (a version-1 run) are prefixed "epoch<e>_". A single epoch is always written as version 1.
inline constexpr int kRunFormatVersionEpochs = 2;
// Several evaluations that the epoch alone does not tell apart (validation loaders, several
// validations in one epoch, test after validate): the top-level meta.json lists
// "evaluations" ({"prefix": "eval<k>_", "epoch", "stage", "validation_in_epoch",
// "dataloader_idx"}), each a version-1 run under its prefix. Written only when needed.
inline constexpr int kRunFormatVersionEvaluations = 3;
inline constexpr const char* kRunFormatName = "shardlens-run";

struct RunMeta {
  int format_version = kRunFormatVersion;
  std::string source = "simulated";  // "simulated", "real", "imported"
  std::optional<Scenario> scenario;  // absent for imports of foreign dumps
  int32_t classes = 0;
  std::vector<std::string> class_names;         // empty, or one per class
  std::vector<int64_t> class_counts;            // true count per class
  std::string class_counts_source = "dataset";  // or "distinct-records" (an estimate)
  int64_t dataset_size = 0;
  std::string dataset;           // the dataset spec, when known (imports with --dataset); optional
  std::optional<int64_t> epoch;  // the epoch evaluated, when known; optional
  // Which evaluation of the epoch, when the run had several (optional): Lightning's stage
  // ("validate", "test"), the validation within the epoch (val_check_interval) and the
  // validation dataloader.
  std::string stage;
  std::optional<int64_t> validation_in_epoch;
  std::optional<int64_t> dataloader_idx;
  // The settings the recorder saw in the user's run (`settings_json` of the dumps); optional.
  std::optional<RecordedSettings> recorded;
  int world_size = 0;
  std::string backend = "simulated";  // "simulated", "gloo", "nccl", "import"
  std::string torch_version;          // torch semantics imitated, or the real one used
  std::optional<int64_t> batch_size;
  int ignore_index = -1;
  bool complete = true;
  std::string incomplete_reason;  // why, when not complete (e.g. "rank 2 failed: ...")
  std::vector<int> failed_ranks;
  // Who started a real run's ranks: "shardlens" (its own launcher), "torchrun", "env",
  // "slurm", "openmpi" or "pmi" (core/runs/launcher_env.h); empty for other sources.
  std::string launcher;
  std::string sync_note;   // set when a real run's sync could not use the wire as asked
  std::string created_by;  // "ShardLens 0.1.0"
};

struct RunFile {
  RunMeta meta;
  StoredRecords records;
  std::vector<Matrix> per_rank;
  Matrix synced;  // classes == 0 when the run ended before synchronizing
  std::optional<Matrix> expected;
  // What each rank reported itself (empty, or one per rank; absent where a rank did not say).
  std::vector<std::optional<Matrix>> reported_per_rank;

  bool has_synced() const { return synced.classes > 0; }
};

// The archive's members (name -> bytes, meta.json last) / the file written atomically
// (temporary file + rename). Throw InputError when the run is inconsistent (lengths,
// shapes, world size) or too large to be read back (core/model/limits.h: kMaxReadBytes).
std::vector<std::pair<std::string, std::string>> run_file_members(const RunFile& run);
void save_run_file(const RunFile& run, const std::string& path);

// Reads and validates everything: archive structure, meta.json fields, checksums, array
// dtypes, lengths and shapes, value ranges. Throws InputError "PATH: what is wrong".
// A file of several epochs is refused by these two ("open it as a multi-epoch run").
RunFile parse_run_file(const std::string& bytes, const std::string& origin);
RunFile load_run_file(const std::string& path);

// Every evaluation of a run file, in the order saved (a single-evaluation file gives one).
std::vector<RunFile> parse_run_epochs(const std::string& bytes, const std::string& origin);
std::vector<RunFile> load_run_epochs(const std::string& path);
// Writes one evaluation as version 1, several of distinct increasing epochs as version 2,
// else version 3; every evaluation needs its epoch number and a distinct (stage, epoch,
// validation, dataloader).
std::vector<std::pair<std::string, std::string>> run_epochs_members(
    const std::vector<RunFile>& epochs);
void save_run_epochs(const std::vector<RunFile>& epochs, const std::string& path);

// The order of a run's evaluations: by epoch, then validate before test, then the validation
// within the epoch, then the dataloader.
bool evaluation_before(const RunMeta& a, const RunMeta& b);

// Checks the invariants a run must satisfy (used by save and load; `origin` names the file).
void validate_run(const RunFile& run, const std::string& origin);

}  // namespace shardlens

namespace shardlens {

// Which evaluation of a run file an entry is (its epoch, Lightning stage, validation within
// the epoch and validation dataloader), as the top-level meta.json lists it.
struct RunEvaluationEntry {
  std::optional<int64_t> epoch;
  std::string stage;
  std::optional<int64_t> validation_in_epoch;
  std::optional<int64_t> dataloader_idx;
};

// The evaluations of a run file, in the order saved, read from its top-level meta.json alone
// (no records, matrices or other members are inflated): what a picker lists before loading
// one. A version-1 file lists its one evaluation. Throws InputError "PATH: what is wrong".
std::vector<RunEvaluationEntry> list_run_evaluations(const std::string& path);

}  // namespace shardlens

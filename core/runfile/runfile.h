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
//   rank{r}_cells_per_record / _cell_key / _cell_count   a task of many counts: each record's
//                                  cells (target * C + prediction, count), format_version 5
// Matrices are int64 when every cell is a finite integer, float64 otherwise. A matrix of at
// least 4096 cells of which fewer than a third are nonzero is stored as its nonzero cells
// instead, "<name>_sparse" [K, 3] of (row, column, value) (core/runfile/sparse_matrix.h), and
// its evaluation's meta.json says format_version 4.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/evaluation/run_metadata.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/records.h"

namespace shardlens {

inline constexpr int kRunFormatVersion = 1;  // RunMetadata::format_version of a new file
// Several epochs in one file: a top-level meta.json lists them, and each epoch's members
// (a version-1 run) are prefixed "epoch<e>_". A single epoch is always written as version 1.
inline constexpr int kRunFormatVersionEpochs = 2;
// Several evaluations that the epoch alone does not tell apart (validation loaders, several
// validations in one epoch, test after validate): the top-level meta.json lists
// "evaluations" ({"prefix": "eval<k>_", "epoch", "stage", "validation_in_epoch",
// "dataloader_idx"}), each a version-1 run under its prefix. Written only when needed.
inline constexpr int kRunFormatVersionEvaluations = 3;
// One evaluation whose matrices may be stored sparse ("<name>_sparse" members): written only
// when one is, so a file without them stays readable by a ShardLens before them.
inline constexpr int kRunFormatVersionSparse = 4;
// One evaluation whose samples count many cells (meta.json "task" other than
// classification): each rank's records carry their cells, rank{r}_cells_per_record [n] int64,
// rank{r}_cell_key [M] int32 (target * C + prediction) and rank{r}_cell_count [M] int64, in
// record order. Written only for such a task (a reader before it would count one cell a sample).
inline constexpr int kRunFormatVersionCells = 5;
inline constexpr const char* kRunFormatName = "shardlens-run";

struct RunFile {
  RunMetadata meta;  // written to and read from meta.json
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
// shapes, world size) or too large to be read back (core/vocabulary/limits.h: kMaxReadBytes).
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
bool evaluation_before(const RunMetadata& a, const RunMetadata& b);

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

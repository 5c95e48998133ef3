#pragma once
// The one evaluation every consumer reads: views, reports, exports, the diagnosis and the
// CLI see a simulation and a user's run (recorded, imported) as the same thing. What only
// some evaluations have is optional and says so:
//   plan    which positions each rank's sampler produced (simulations);
//   inputs  the label and prediction of every dataset index (simulations, or imports given
//           the dataset and the predictions);
//   labels  the true class of every dataset index (and, through labels->source, the
//           dataset's images), when the dataset is known;
//   synced  absent when the run ended before its sync (`synced_missing` says why);
//   expected absent when not every prediction is known (`expected_missing` says why); a run
//           whose records cover every dataset index knows every prediction.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnosis/diagnosis.h"
#include "core/evaluation/recorded_settings.h"
#include "core/evaluation/scenario.h"
#include "core/dataset/dataset_inputs.h"
#include "core/dataset/labels.h"
#include "core/model/matrix.h"
#include "core/model/progress.h"
#include "core/model/records.h"
#include "core/torchsem/loader.h"

namespace shardlens {

// Where an evaluation's records come from.
struct Provenance {
  std::string source = "simulated";   // "simulated", "real", "imported"
  std::string backend = "simulated";  // "simulated", "gloo", "nccl", "import"
  std::string torch_version;          // torch semantics imitated, or the real one used
  std::string created_by;             // the program that wrote the run file
  std::string file;                   // the run file it was read from; empty for a live one
  bool scenario_recorded = true;      // false: `scenario` is a stand-in (imported dumps)
  bool complete = true;
  std::string incomplete_reason;  // why not complete, when not
  std::string sync_note;          // a real run's sync could not use the wire as asked
  std::string launcher;           // who started a real run's ranks (RunMeta::launcher)
  std::string class_counts_source = "dataset";  // or "distinct-records" (an estimate)
  size_t epochs = 1;                            // evaluations in the run file
  // The settings the recorder saw in the user's own run (imports of dumps with settings_json).
  std::optional<RecordedSettings> recorded;
  size_t epoch_index = 0;  // which of them this is

  bool is_run() const { return !file.empty() || source != "simulated"; }
};

struct Evaluation {
  Scenario scenario;  // as simulated, or as recorded with the run
  Provenance provenance;
  std::vector<std::string> class_names;  // one per class (the number as text when unnamed)
  std::vector<int64_t> class_counts;     // true count of each class
  int64_t dataset_size = 0;
  std::string dataset;  // the dataset spec when known (for images and subsets)
  int64_t epoch = 0;    // the epoch evaluated (the sampler's set_epoch)
  int validation = -1;  // which validation of the epoch, when several ran (val_check_interval)
  int dataloader = -1;  // which validation dataloader, when the run had several
  std::string stage;    // Lightning's stage ("validate", "test") when recorded
  int world_size = 0;
  std::optional<int64_t> batch_size;
  int ignore_index = -1;

  std::shared_ptr<const RecordSource> records;  // every rank's evaluated records
  std::shared_ptr<const ShardPlan> plan;        // optional (see above)
  std::shared_ptr<const DatasetInputs> inputs;  // optional
  std::shared_ptr<const Labels> labels;         // optional

  std::vector<Matrix> per_rank;  // as accumulated, in the counter dtype
  std::optional<Matrix> synced;  // what was reported
  std::string synced_missing;    // why there is no synced matrix (set by complete_evaluation)
  std::vector<int> failed_ranks;
  std::optional<Matrix> expected;  // one process on the whole dataset
  std::string expected_missing;    // why there is no expected matrix (set by complete_evaluation)
  // What each rank itself reported, when the run recorded it (every rank logging its own
  // compute()); absent for ranks that did not say.
  std::vector<std::optional<Matrix>> reported_per_rank;
  Matrix expected_distinct;              // one process on the distinct evaluated samples
  std::vector<uint8_t> times_evaluated;  // per dataset index, saturating at 255
  Diagnosis diagnosis;

  int32_t classes() const { return static_cast<int32_t>(class_names.size()); }
  const std::string& class_name(int32_t c) const { return class_names[static_cast<size_t>(c)]; }
  // The matrix a view of the expected counts shows: the whole dataset's when known, else the
  // distinct evaluated samples'.
  const Matrix& expected_or_distinct() const { return expected ? *expected : expected_distinct; }
  // The synced matrix minus the expected one, when both are known.
  std::optional<Matrix> difference() const;
};

// "epoch 1, validation 2, dataloader 1" ("test, epoch 3" for a test stage): what tells an
// evaluation from the others of its run, as the CLI's reports, JSON and the GUI name it.
std::string evaluation_label(const Evaluation& e);

// One name per class: the given names, or each class's number.
std::vector<std::string> class_names_or_numbers(const std::vector<std::string>& names,
                                                int32_t classes);

// Completes an evaluation whose classes, records, per-rank and synced matrices are set:
// coverage and the other record statistics (`stats`, when the caller has them faster than a
// walk over the records: a simulation's plan), the expected matrices (from `inputs` when
// known; a stored `expected` is kept) and the diagnosis, which for a run with no synced
// matrix is the one "incomplete-run" finding.
void complete_evaluation(Evaluation& e, Progress* progress = nullptr,
                         std::optional<RecordStats> stats = std::nullopt);

}  // namespace shardlens

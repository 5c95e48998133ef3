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

#include "core/dataset/dataset_inputs.h"
#include "core/dataset/labels.h"
#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/row_check.h"
#include "core/evaluation/run_metadata.h"
#include "core/torchsem/loader.h"
#include "core/vocabulary/coverage.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/progress.h"
#include "core/vocabulary/records.h"

namespace shardlens {

// Where an evaluation was read from: what the run file itself does not record.
struct Provenance {
  std::string file;        // the run file it was read from; empty for a live one
  size_t epochs = 1;       // evaluations in the run file
  size_t epoch_index = 0;  // which of them this is
};

struct Evaluation {
  // Source, scenario, classes, dataset, which evaluation of the run and how it ended: what a
  // run file records (meta.json). In an Evaluation `class_names` holds one name per class,
  // `classes` their number, and `epoch` is set.
  RunMetadata meta;
  Provenance provenance;
  // Shown for an evaluation whose scenario was not recorded (imported dumps): named after
  // the file, with the torch the run recorded.
  Scenario stand_in;

  std::shared_ptr<const RecordSource> records;  // every rank's evaluated records
  std::shared_ptr<const ShardPlan> plan;        // optional (see above)
  std::shared_ptr<const DatasetInputs> inputs;  // optional
  std::shared_ptr<const Labels> labels;         // optional
  // The classes' parents (the dataset's ",hierarchy=FILE"), kept when the samples are
  // released: the reports and views collapse the matrices to them. Null without one.
  std::shared_ptr<const ClassHierarchy> class_groups;

  std::vector<Matrix> per_rank;    // as accumulated, in the counter dtype
  std::optional<Matrix> synced;    // what was reported
  std::string synced_missing;      // why there is no synced matrix (set by complete_evaluation)
  std::optional<Matrix> expected;  // one process on the whole dataset
  std::string expected_missing;    // why there is no expected matrix (set by complete_evaluation)
  // What each rank itself reported, when the run recorded it (every rank logging its own
  // compute()); absent for ranks that did not say.
  std::vector<std::optional<Matrix>> reported_per_rank;
  // Each per-rank matrix's total and diagonal, set by complete_evaluation (a background
  // job): what the accuracies a rank logs are read from, in O(ranks) on the GUI thread
  // rather than a pass over 64 dense 1000 x 1000 matrices there for every result shown.
  std::vector<double> rank_totals, rank_correct;
  Matrix expected_distinct;  // one process on the distinct evaluated samples
  // Each row of the reported matrix against its class's true count (`meta.class_counts`): the
  // synced matrix's rows, or for a run that never synchronized what its ranks counted
  // together. Set by complete_evaluation; the diagnosis, reports, row drift, heatmaps and
  // charts read it instead of summing and comparing rows themselves.
  RowCheck row_check;
  Coverage times_evaluated;  // per dataset index, saturating at 255
  Diagnosis diagnosis;

  int32_t classes() const { return static_cast<int32_t>(meta.class_names.size()); }
  const std::string& class_name(int32_t c) const {
    return meta.class_names[static_cast<size_t>(c)];
  }
  // As simulated, or as recorded with the run, else the stand-in.
  const Scenario& scenario() const { return meta.scenario ? *meta.scenario : stand_in; }
  bool scenario_recorded() const { return meta.scenario.has_value(); }
  int64_t epoch() const { return meta.epoch.value_or(0); }
  // Which validation of the epoch / which validation dataloader; -1 when the run did not
  // number it.
  int validation() const { return meta.validation_in_epoch ? int(*meta.validation_in_epoch) : -1; }
  int dataloader() const { return meta.dataloader_idx ? int(*meta.dataloader_idx) : -1; }
  // A user's run (read from a file, recorded, imported) rather than a live simulation.
  bool is_run() const { return !provenance.file.empty() || meta.source != "simulated"; }
  // The matrix a view of the expected counts shows: the whole dataset's when known, else the
  // distinct evaluated samples'.
  const Matrix& expected_or_distinct() const { return expected ? *expected : expected_distinct; }
  // The synced matrix minus the expected one, when both are known.
  std::optional<Matrix> difference() const;
};

// Drops what an evaluation holds per dataset sample (records, plan, inputs, labels,
// coverage), keeping its matrices, metadata and diagnosis: what a report reads. The CLI does
// it before printing when nothing else is written (at 10^8 samples, 0.9 GB the report never
// reads).
void release_samples(Evaluation& e);

// "epoch 1, validation 2, dataloader 1" ("test, epoch 3" for a test stage): what tells an
// evaluation from the others of its run, as the CLI's reports, JSON and the GUI name it.
std::string evaluation_label(const Evaluation& e);

// What the evaluation logged of the accuracy with sync_dist: its scenario's setting, when
// recorded; None for a run whose records do not say (no logged value is then shown).
LoggedAccuracy logged_accuracy(const Evaluation& e);

// One name per class: the given names, or each class's number.
std::vector<std::string> class_names_or_numbers(const std::vector<std::string>& names,
                                                int32_t classes);

// Completes an evaluation whose classes, records, per-rank and synced matrices are set:
// coverage and the other record statistics (`stats`, when the caller has them faster than a
// walk over the records: a simulation's plan), the expected matrices (from `inputs` when
// known; a stored `expected` is kept), the row check and the diagnosis, which for a run with
// no synced matrix is the one "incomplete-run" finding.
// The evaluation's row check (`Evaluation::row_check`): the synced matrix's rows, or what the
// ranks counted together when there is none. complete_evaluation sets it; whatever drops the
// synced matrix afterwards sets it again.
RowCheck check_evaluation_rows(const Evaluation& e);

void complete_evaluation(Evaluation& e, Progress* progress = nullptr,
                         std::optional<RecordStats> stats = std::nullopt);

}  // namespace shardlens

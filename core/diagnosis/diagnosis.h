#pragma once
// Diagnosis: every difference between the reported matrix and the expected one, classified
// into a named pattern of the catalogue (core/diagnosis/catalogue_*.cpp). Works from records and
// matrices alone, so it applies to simulated, real and imported runs alike (no scenario toggle is
// consulted).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset/dataset_inputs.h"
#include "core/diagnosis/catalogue.h"
#include "core/diagnosis/finding.h"
#include "core/diagnosis/row_check.h"
#include "core/diagnosis/stats.h"
#include "core/torchsem/sampler.h"
#include "core/torchsem/sync.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/records.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens {

struct DiagnosisInput {
  const RecordSource* records = nullptr;
  const std::vector<Matrix>* per_rank = nullptr;  // as accumulated
  const Matrix* reported = nullptr;               // the synced matrix
  std::vector<int64_t> class_counts;              // true count of each class in the dataset
  // The reported matrix's rows against `class_counts`, when the caller checked them
  // (complete_evaluation); when null, diagnose() checks them itself.
  const RowCheck* rows = nullptr;
  int64_t dataset_size = 0;
  // Expected matrix of the whole dataset when every prediction is known (simulations);
  // for real runs with unseen samples, absent: the check falls back to row sums.
  const Matrix* expected = nullptr;
  // True class of every dataset index when known (lets missing samples name their class):
  // from the dataset inputs of a simulation, or from labels attached to a run.
  const DatasetInputs* inputs = nullptr;
  const std::vector<int32_t>* targets = nullptr;
  // What the records show (coverage, duplicates, exact counts), computed once for the
  // evaluation; when null, diagnose() walks the records itself.
  const RecordStats* stats = nullptr;
  // Without targets: one count per distinct evaluated sample; a class whose row falls short
  // of its true count lost samples.
  const Matrix* distinct = nullptr;
  std::optional<int64_t> batch_size;  // known from metadata, sharpens some patterns
  // Whether a batch limit was in force, when known (a simulation's scenario, the limit a
  // recorder saw). Known absent: a drop that stops where a limit would is not said to be a
  // limit's. Known present: the shuffled order's finding names the limit the records show.
  std::optional<bool> batch_limited;
  // Whether the evaluation loader dropped its last incomplete batch, when known (a
  // simulation's scenario, the drop_last a recorder saw). Known false: samples never
  // evaluated are not said to be consistent with it.
  std::optional<bool> loader_drop_last;
  // Whether a shuffled order changes from epoch to epoch, when known (a simulation's sampler
  // seeds it with seed + epoch). Unknown for a run: one evaluation's records show one order.
  std::optional<bool> reshuffled_each_epoch;
  // What the run logged of its metric with sync_dist (a simulation's scenario says; a run's
  // records do not): the task's headline metric (torchsem/task_scores.h: accuracy, mIoU,
  // token accuracy, macro F1); a logged value other than the expected matrix's is a finding.
  LoggedAccuracy logged_accuracy = LoggedAccuracy::None;
  Task task = Task::Classification;  // which metric that is
  // What each rank reported itself, when recorded: ranks that disagree were not synced.
  const std::vector<std::optional<Matrix>>* reported_per_rank = nullptr;
  int ignore_index = -1;
  // The sampler, when the scenario was recorded: Accelerate's cycled padding and Lightning's
  // wrapper are told apart from DistributedSampler padding and seed divergence by it.
  std::optional<SamplerKind> sampler;
  // With Accelerate's sampler: what the prepared loader sampled with (a DistributedSampler
  // inside it is sharded twice).
  std::optional<AccelerateInput> accelerate_input;
  // What Lightning's wrapper wrapped, when known. Whether that sampler draws with replacement
  // (WeightedRandomSampler's default): its repeats within a rank are then its own draws, no
  // sanity leak. Whether every rank listed the same draw (a simulation's plan knows it; for a
  // run the records' padding tells, else `seed_everything_seed`): duplicates across ranks are
  // then the draw's own, not ranks drawing their own lists.
  std::optional<bool> inner_with_replacement;
  std::optional<bool> ranks_share_list;
  // The seed Lightning's sampler was given (PL_GLOBAL_SEED), as a recorder saw it; a non-zero
  // one means seed_everything ran on every rank, which seeds their global generators alike.
  std::optional<int64_t> seed_everything_seed;
};

struct Diagnosis {
  bool correct = true;                   // reported equals expected
  std::vector<int32_t> mismatched_rows;  // the row check's wrong rows (row_check.h)
  double reported_total = 0;
  int64_t expected_total = 0;
  int64_t evaluated_records = 0;
  int64_t distinct_evaluated = 0;
  int64_t duplicated_samples = 0;  // distinct indices evaluated more than once
  int64_t missing_samples = 0;     // indices never evaluated
  std::vector<Finding> findings;
};

Diagnosis diagnose(const DiagnosisInput& input);

// One rank's records and the correct ones among them: what its own accuracy counts.
struct RankTally {
  double records = 0, correct = 0;
};
// What self.log(name, value, sync_dist=True) logs of each rank's epoch value: the mean of
// the values of the ranks that evaluated something, equal weights. Absent with fewer than two.
std::optional<double> logged_rank_mean_of(const std::vector<double>& rank_values);
// The same of each rank's epoch accuracy (self.log("val_acc", acc, sync_dist=True)).
std::optional<double> logged_rank_mean(const std::vector<RankTally>& ranks);
// What self.log("val_acc", batch_acc, sync_dist=True, batch_size=n) in validation_step logs:
// each rank sums value x batch size and the batch sizes; sync_dist averages both over the
// ranks, the sizes' mean truncated in its int64 tensor (Lightning's _sync_ddp): (correct / W)
// / floor(records / W). Absent with fewer than two ranks or fewer records than ranks.
std::optional<double> logged_per_batch(const std::vector<RankTally>& ranks);

// The diagnosis of a run that ended before its sync: coverage from the records, and one
// "incomplete-run" finding saying why no row can be checked (`why`: what stopped the sync).
Diagnosis diagnose_incomplete(const RecordSource& records, const std::vector<int64_t>& class_counts,
                              const Coverage& times_evaluated, const std::string& why);

// The diagnosis of an evaluation with no records at all: nothing can be checked, and an
// empty matrix that "equals" an empty expectation is no evidence; one "nothing-recorded"
// finding, not correct.
Diagnosis diagnose_nothing_recorded(const std::vector<int64_t>& class_counts);

}  // namespace shardlens

#pragma once
// The simulation engine: scenario -> shards -> per-rank matrices -> synced -> expected ->
// diagnosis. Callable from a background thread; reports progress and honours cancel.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dataset/dataset_inputs.h"
#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"
#include "core/sim/specs.h"
#include "core/torchsem/loader.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/progress.h"
#include "core/vocabulary/records.h"

namespace shardlens {

// Packs labels and one prediction per index (validated against the labels) into keys, in
// the predictions' own storage.
std::shared_ptr<const DatasetInputs> make_inputs(std::shared_ptr<const Labels> labels,
                                                 std::vector<int32_t> predictions);
// The same for a predictor that needs only each sample's index and target (perfect, noisy):
// each key is written over its target, so one array of n values is held, not two.
std::shared_ptr<const DatasetInputs> make_inputs_in_place(Labels labels,
                                                          const LabelPredictor& predictor,
                                                          Progress* progress = nullptr);
// The inputs of a task whose samples count many cells (sample_cells.h): row i of `cells` is
// dataset index i. The keys become each sample's dominant (true, predicted) class (0 for an
// empty sample) and the class counts the rows' summed cells; `labels` gives the class names
// and source (its targets are not read).
std::shared_ptr<const DatasetInputs> make_cell_inputs(std::shared_ptr<const CellTable> cells,
                                                      Task task, Labels labels);
// Loads dataset and predictor specs of a scenario.
std::shared_ptr<const DatasetInputs> load_inputs(const Scenario& s, Progress* progress = nullptr);

// Records implied by a shard plan (no per-rank copy of the data).
class SimulatedRecords : public RecordSource {
 public:
  SimulatedRecords(std::shared_ptr<const DatasetInputs> inputs,
                   std::shared_ptr<const ShardPlan> plan);
  int world_size() const override;
  int64_t rank_size(int rank) const override;
  void read(int rank, int64_t offset, std::span<Record> out) const override;
  const CellTable* cell_table() const override { return m_inputs->cells.get(); }

 private:
  std::shared_ptr<const DatasetInputs> m_inputs;
  std::shared_ptr<const ShardPlan> m_plan;
  std::vector<std::vector<int64_t>> m_ends;  // per rank: records up to each segment's end
};

// What a simulation of `s` on a dataset of n samples and `classes` classes holds, for the
// load budget: the dataset's per-index arrays plus the order Lightning's wrapper lists (its
// inner sampler's length, once per distinct seed, unless `sampler_lists` is false), a matrix
// per rank, every validation.
EvaluationSize simulation_size(const Scenario& s, int64_t n, int32_t classes,
                               bool sampler_lists = true);
// Refuses a scenario whose sizes are too large for the budget before any label is drawn: the
// dataset spec's own (synthetic), named `dataset_origin` ("--dataset", a scenario file), then
// with the lists Lightning's wrapper draws, named `sampler_origin` (by default the flag that
// sets their length). simulate() and evaluate() check again once the labels are known.
void check_simulation_budget(const Scenario& s, const std::string& dataset_origin,
                             const std::string& sampler_origin = {});
// The flag that sets the length of the list Lightning's wrapper draws ("--inner-num-samples").
std::string sampler_list_flag(const Scenario& s);

// Runs the whole pipeline on prepared inputs.
// `earlier`: an evaluation simulated before on the same inputs (the one shown when a setting
// changes). What depends on nothing that changed is taken from it instead of recomputed
// (reusable_plan(), reusable_counts()): a sync strategy, pad_across_processes or a counter
// dtype toggled re-syncs and re-diagnoses the counts already made. Equal to evaluate(s,
// inputs) in every field.
Evaluation evaluate(const Scenario& s, std::shared_ptr<const DatasetInputs> inputs,
                    Progress* progress = nullptr, const Evaluation* earlier = nullptr);

// What a setting change leaves unchanged, the one place that says it. The shard plan (every
// rank's positions, the permutation among them) depends on the dataset size and the sampler
// and loader settings alone; the per-rank matrices on that plan, the inputs, the counter
// dtype and ignore_index. The sync strategy, pad_across_processes, the validations' count and
// the names touch neither.
bool reusable_plan(const Evaluation& earlier, const Scenario& s, const DatasetInputs& inputs);
bool reusable_counts(const Evaluation& earlier, const Scenario& s, const DatasetInputs& inputs);
// Convenience: load inputs from the scenario's specs, then evaluate.
Evaluation simulate(const Scenario& s, Progress* progress = nullptr);

// Per-rank accumulation in the counter dtype (int64 exact; float dtypes add each batch's
// bincount with round-to-nearest-even, as a torch float tensor state would).
std::vector<Matrix> accumulate(const ShardPlan& plan, const DatasetInputs& inputs,
                               CounterDtype dtype, int ignore_index, Progress* progress);

}  // namespace shardlens

#pragma once
// The simulation engine: scenario -> shards -> per-rank matrices -> synced -> expected ->
// diagnosis. Callable from a background thread; reports progress and honours cancel.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/diagnosis.h"
#include "core/labels.h"
#include "core/loader.h"
#include "core/matrix.h"
#include "core/progress.h"
#include "core/records.h"
#include "core/report.h"
#include "core/scenario.h"

namespace shardlens {

// Dataset inputs of a simulation: labels and the prediction of every index, packed as
// key = target * C + prediction so the hot loop gathers one 32-bit value per sample.
struct DatasetInputs {
  std::shared_ptr<const Labels> labels;
  std::vector<uint32_t> keys;
  int32_t classes() const { return labels->num_classes; }
  int64_t size() const { return labels->size(); }
  int32_t prediction(int64_t index) const {
    return static_cast<int32_t>(keys[static_cast<size_t>(index)] % classes());
  }
};

std::shared_ptr<const DatasetInputs> make_inputs(std::shared_ptr<const Labels> labels,
                                                 const std::vector<int32_t>& predictions);
// Loads dataset and predictor specs of a scenario.
std::shared_ptr<const DatasetInputs> load_inputs(const Scenario& s, Progress* progress = nullptr);

// Records implied by a shard plan (no per-rank copy of the data).
class SimulatedRecords : public RecordSource {
 public:
  SimulatedRecords(std::shared_ptr<const DatasetInputs> inputs, const ShardPlan* plan);
  int world_size() const override;
  int64_t rank_size(int rank) const override;
  void read(int rank, int64_t offset, std::span<Record> out) const override;

 private:
  std::shared_ptr<const DatasetInputs> m_inputs;
  const ShardPlan* m_plan;
};

struct Evaluation {
  Scenario scenario;
  std::shared_ptr<const DatasetInputs> inputs;
  ShardPlan plan;
  std::vector<Matrix> per_rank;   // as accumulated, in the counter dtype
  Matrix synced;                  // what is reported (zeros when synced_missing says why not)
  std::string synced_missing;     // set for a run that ended before its sync: why, for display
  std::vector<int> failed_ranks;  // ranks of a run that failed (their matrices: what arrived)
  Matrix expected;                // a single process on the whole dataset
  Matrix expected_distinct;       // a single process on the distinct evaluated samples
  std::vector<int64_t> class_counts;
  std::vector<uint8_t> times_evaluated;  // per dataset index, saturating at 255
  Diagnosis diagnosis;

  std::unique_ptr<SimulatedRecords> records() const;
};

// Runs the whole pipeline on prepared inputs.
Evaluation evaluate(const Scenario& s, std::shared_ptr<const DatasetInputs> inputs,
                    Progress* progress = nullptr);
// Convenience: load inputs from the scenario's specs, then evaluate.
Evaluation simulate(const Scenario& s, Progress* progress = nullptr);

// Per-rank accumulation in the counter dtype (int64 exact; float dtypes add each batch's
// bincount with round-to-nearest-even, as a torch float tensor state would).
std::vector<Matrix> accumulate(const ShardPlan& plan, const DatasetInputs& inputs,
                               CounterDtype dtype, int ignore_index, Progress* progress);

// The report of a simulation (class names filled in, the scenario's title).
ReportView report_view(const Evaluation& e);

}  // namespace shardlens

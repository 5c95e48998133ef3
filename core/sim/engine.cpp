#include "core/sim/engine.h"

#include "core/evaluation/framework_hazards.h"
#include "core/model/types.h"
#include "core/sim/predictor.h"
#include "core/sim/specs.h"
#include "core/torchsem/accelerate_sampler.h"

namespace shardlens {

std::shared_ptr<const DatasetInputs> make_inputs(std::shared_ptr<const Labels> labels,
                                                 const std::vector<int32_t>& predictions) {
  validate_predictions(predictions, *labels, "predictions");
  auto inputs = std::make_shared<DatasetInputs>();
  const auto c = static_cast<uint32_t>(labels->num_classes);
  inputs->keys.resize(labels->targets.size());
  for (size_t i = 0; i < predictions.size(); ++i) {
    inputs->keys[i] =
        static_cast<uint32_t>(labels->targets[i]) * c + static_cast<uint32_t>(predictions[i]);
  }
  inputs->labels = std::move(labels);
  return inputs;
}

std::shared_ptr<const DatasetInputs> load_inputs(const Scenario& s, Progress* progress) {
  auto labels = std::make_shared<const Labels>(load_labels(s.dataset, progress));
  const std::vector<int32_t> predictions = load_predictions(s.predictor, *labels, progress);
  return make_inputs(std::move(labels), predictions);
}

namespace {

std::vector<uint8_t> count_evaluations(const ShardPlan& plan) {
  std::vector<uint8_t> times(static_cast<size_t>(plan.n), 0);
  for (const EvaluatedRank& rank : plan.evaluated) {
    for_each_element(rank.sequence, [&](int64_t index, uint8_t) {
      uint8_t& t = times[static_cast<size_t>(index)];
      t = static_cast<uint8_t>(t + (t < 255));
    });
  }
  return times;
}

bool loader_exhausted(const ShardPlan& plan, const LoaderConfig& loader) {
  if (loader.drop_last) return false;
  for (const EvaluatedRank& r : plan.evaluated) {
    if (r.batches < batches_per_rank(r.sampler_size, loader)) return false;
  }
  return true;
}

void validate(const Scenario& s, const DatasetInputs& in) {
  if (s.ignore_index >= in.classes()) {
    throw InputError("--ignore-index: " + std::to_string(s.ignore_index) +
                     " is not a class of this dataset");
  }
}

}  // namespace

Evaluation evaluate(const Scenario& s, std::shared_ptr<const DatasetInputs> inputs,
                    Progress* progress) {
  validate(s, *inputs);
  Evaluation e;
  e.scenario = s;
  e.inputs = std::move(inputs);
  const DatasetInputs& in = *e.inputs;
  e.labels = in.labels;
  e.class_names = class_names_or_numbers(in.labels->class_names, in.classes());
  e.class_counts = in.labels->class_counts();
  e.dataset_size = in.size();
  e.dataset = s.dataset;
  e.epoch = s.sampler.epoch;
  e.world_size = s.sampler.world_size;
  e.batch_size = s.loader.batch_size;
  e.ignore_index = s.ignore_index;
  e.provenance.torch_version = s.sampler.torch.to_string();
  step(progress, "sharding", 0.0);
  auto plan = std::make_shared<const ShardPlan>(plan_shards(in.size(), s.sampler, s.loader));
  e.plan = plan;
  e.records = std::make_shared<SimulatedRecords>(e.inputs, plan);
  step(progress, "accumulating", 0.0);
  e.per_rank = accumulate(*plan, in, s.dtype, s.ignore_index, progress);
  SyncInputs sync;
  sync.per_rank = &e.per_rank;
  sync.records = e.records.get();
  sync.dataset_size = in.size();
  sync.batch_size = s.loader.batch_size;
  sync.loader_exhausted = loader_exhausted(*plan, s.loader);
  use_plan_batches(sync, *plan, s.loader);  // Accelerate's split batches: B / W per rank
  sync.ignore_index = s.ignore_index;
  sync.dtype = s.dtype;
  e.synced = synchronize(s.sync, sync);
  // The plan counts coverage without materializing records.
  complete_evaluation(e, count_evaluations(*plan), progress);
  report_framework_hazards(e);  // uneven Accelerate steps: a per-step gather would hang
  step(progress, "done", 1.0);
  return e;
}

Evaluation simulate(const Scenario& s, Progress* progress) {
  return evaluate(s, load_inputs(s, progress), progress);
}

}  // namespace shardlens

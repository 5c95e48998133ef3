#include "core/engine.h"

#include "core/predictor.h"
#include "core/specs.h"
#include "core/types.h"

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

Matrix bincount_where(const DatasetInputs& in, const std::vector<uint8_t>* only_evaluated) {
  Matrix m(in.classes());
  for (size_t i = 0; i < in.keys.size(); ++i) {
    if (!only_evaluated || (*only_evaluated)[i] > 0) m.cells[in.keys[i]] += 1;
  }
  return m;
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
  step(progress, "sharding", 0.0);
  e.plan = plan_shards(in.size(), s.sampler, s.loader);
  step(progress, "accumulating", 0.0);
  e.per_rank = accumulate(e.plan, in, s.dtype, s.ignore_index, progress);
  const auto records = e.records();
  SyncInputs sync;
  sync.per_rank = &e.per_rank;
  sync.records = records.get();
  sync.dataset_size = in.size();
  sync.batch_size = s.loader.batch_size;
  sync.loader_exhausted = loader_exhausted(e.plan, s.loader);
  sync.ignore_index = s.ignore_index;
  sync.dtype = s.dtype;
  e.synced = synchronize(s.sync, sync);
  step(progress, "expected", 0.0);
  e.times_evaluated = count_evaluations(e.plan);
  e.expected = bincount_where(in, nullptr);
  e.expected_distinct = bincount_where(in, &e.times_evaluated);
  e.class_counts = in.labels->class_counts();
  step(progress, "diagnosing", 0.0);
  DiagnosisInput d;
  d.records = records.get();
  d.per_rank = &e.per_rank;
  d.reported = &e.synced;
  d.class_counts = e.class_counts;
  d.dataset_size = in.size();
  d.expected = &e.expected;
  d.targets = &in.labels->targets;
  d.batch_size = s.loader.batch_size;
  d.ignore_index = s.ignore_index;
  e.diagnosis = diagnose(d);
  step(progress, "done", 1.0);
  return e;
}

ReportView report_view(const Evaluation& e) {
  ReportView v;
  const Scenario& s = e.scenario;
  v.title = !s.title.empty() ? s.title : !s.name.empty() ? s.name : "ShardLens simulation";
  const Labels& labels = *e.inputs->labels;
  for (int32_t c = 0; c < labels.num_classes; ++c) v.class_names.push_back(labels.class_name(c));
  v.class_counts = e.class_counts;
  v.dataset_size = labels.size();
  v.world_size = e.plan.world_size;
  v.per_rank = &e.per_rank;
  v.synced = &e.synced;
  v.expected = &e.expected;
  v.diagnosis = &e.diagnosis;
  return v;
}

Evaluation simulate(const Scenario& s, Progress* progress) {
  return evaluate(s, load_inputs(s, progress), progress);
}

}  // namespace shardlens

#include "core/sim/engine.h"

#include <algorithm>
#include <chrono>
#include <future>

#include "core/dataset/dataset_spec.h"
#include "core/evaluation/counts_reuse.h"
#include "core/evaluation/framework_hazards.h"
#include "core/sim/dense_inputs.h"
#include "core/sim/predictor.h"
#include "core/sim/specs.h"
#include "core/torchsem/accelerate_sampler.h"
#include "core/torchsem/rank_sum.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

std::shared_ptr<const DatasetInputs> make_inputs(std::shared_ptr<const Labels> labels,
                                                 std::vector<int32_t> predictions) {
  if (predictions.size() != labels->targets.size())
    validate_predictions(predictions, *labels, "predictions");  // names the mismatch
  auto inputs = std::make_shared<DatasetInputs>();
  const int32_t c = labels->num_classes;
  inputs->num_classes = c;
  std::vector<int64_t> counts(static_cast<size_t>(c), 0);
  // The keys are packed where the predictions were: no third array of n values. The range
  // check rides along in the same pass.
  const int32_t* targets = labels->targets.data();
  bool in_range = true;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const int32_t p = predictions[i];
    in_range &= p >= 0 && p < c;
    predictions[i] = p + targets[i] * c;
    ++counts[static_cast<size_t>(targets[i])];
  }
  inputs->class_counts = std::move(counts);
  if (!in_range) {
    for (size_t i = 0; i < predictions.size(); ++i) predictions[i] -= targets[i] * c;
    validate_predictions(predictions, *labels, "predictions");  // names the first bad one
  }
  inputs->keys = std::move(predictions);
  // Everything but the targets, which the keys now hold; the full labels are freed here
  // unless the caller keeps them.
  auto rest = std::make_shared<Labels>();
  rest->num_classes = c;
  rest->class_names = labels->class_names;
  rest->source = labels->source;
  rest->source_indices = labels->source_indices;
  inputs->labels = std::move(rest);
  // Released here, not when the caller's full expression ends (where the ABI destroys a
  // by-value parameter): `evaluate(s, make_inputs(...))` would otherwise hold the targets
  // through the whole evaluation.
  labels.reset();
  return inputs;
}

std::shared_ptr<const DatasetInputs> make_inputs_in_place(Labels labels,
                                                          const LabelPredictor& predictor,
                                                          Progress* progress) {
  auto inputs = std::make_shared<DatasetInputs>();
  const int32_t c = labels.num_classes;
  inputs->num_classes = c;
  std::vector<int64_t> counts(static_cast<size_t>(c), 0);
  int32_t* keys = labels.targets.data();
  const int64_t n = labels.size();
  constexpr int64_t kChunk = int64_t(1) << 20;
  for (int64_t begin = 0; begin < n; begin += kChunk) {
    step(progress, "predicting", static_cast<double>(begin) / static_cast<double>(n));
    const int64_t end = std::min(n, begin + kChunk);
    for (int64_t i = begin; i < end; ++i) {
      const int32_t t = keys[i];
      ++counts[static_cast<size_t>(t)];
      keys[i] = t * c + predictor.predict(i, t, c);
    }
  }
  inputs->class_counts = std::move(counts);
  inputs->keys = std::move(labels.targets);
  labels.targets = {};  // a moved-from vector is only promised valid
  inputs->labels = std::make_shared<const Labels>(std::move(labels));
  return inputs;
}

std::shared_ptr<const DatasetInputs> make_cell_inputs(std::shared_ptr<const CellTable> cells,
                                                      Task task, Labels labels) {
  auto inputs = std::make_shared<DatasetInputs>();
  const int32_t c = cells->classes;
  inputs->num_classes = c;
  inputs->task = task;
  inputs->class_counts.assign(size_t(c), 0);
  inputs->keys.resize(size_t(cells->rows()));
  for (int64_t i = 0; i < cells->rows(); ++i) {
    const auto [t, p] = cells->dominant(i);
    inputs->keys[size_t(i)] = t < 0 ? 0 : t * c + p;
    const auto keys = cells->keys_of(i);
    const auto counts = cells->counts_of(i);
    for (size_t k = 0; k < keys.size(); ++k)
      inputs->class_counts[keys[k] / uint32_t(c)] += counts[k];
  }
  labels.targets = {};
  labels.num_classes = c;
  inputs->labels = std::make_shared<const Labels>(std::move(labels));
  inputs->cells = std::move(cells);
  return inputs;
}

namespace {

// The inputs of labels already loaded: in place when the predictor allows it.
std::shared_ptr<const DatasetInputs> inputs_of(Labels labels, const Scenario& s,
                                               const std::optional<LabelPredictor>& predictor,
                                               Progress* progress) {
  if (predictor) return make_inputs_in_place(std::move(labels), *predictor, progress);
  auto shared = std::make_shared<const Labels>(std::move(labels));
  std::vector<int32_t> predictions = load_predictions(s.predictor, *shared, progress);
  return make_inputs(std::move(shared), std::move(predictions));
}

}  // namespace

std::shared_ptr<const DatasetInputs> load_inputs(const Scenario& s, Progress* progress) {
  if (is_dense_dataset(s.dataset)) return load_dense_inputs(s, progress);
  Labels labels = load_labels(s.dataset, progress);
  const std::optional<LabelPredictor> predictor = label_predictor(s.predictor);
  return inputs_of(std::move(labels), s, predictor, progress);
}

EvaluationSize simulation_size(const Scenario& s, int64_t n, int32_t classes, bool sampler_lists) {
  EvaluationSize size;
  size.samples = n;
  size.classes = classes;
  size.world_size = s.sampler.world_size;
  size.evaluations = std::max(s.validations_per_epoch, 1);
  if (sampler_lists && s.sampler.kind == SamplerKind::LightningWrapper) {
    // The inner sampler's list, and a shuffled copy of it, per distinct seed.
    const InnerSampler& inner = s.sampler.inner;
    int64_t length = n;
    if (inner.kind == InnerSampler::Kind::WeightedRandom)
      length = inner.num_samples > 0 ? inner.num_samples
                                     : (inner.weights.empty() ? n : int64_t(inner.weights.size()));
    if (inner.kind == InnerSampler::Kind::Recorded) length = int64_t(inner.indices.size());
    std::vector<int64_t> seeds = s.sampler.rank_seeds;
    std::sort(seeds.begin(), seeds.end());
    const int64_t orders =
        std::max<int64_t>(1, std::unique(seeds.begin(), seeds.end()) - seeds.begin());
    const int64_t most = kMaxSamples * int64_t(kMaxSimulatedWorldSize);  // no overflow below
    size.samples += std::min(std::min(length, kMaxSamples) * orders, most);
  }
  return size;
}

std::string sampler_list_flag(const Scenario& s) {
  switch (s.sampler.inner.kind) {
    case InnerSampler::Kind::WeightedRandom:
      return s.sampler.inner.num_samples > 0 ? "--inner-num-samples" : "--inner-weights";
    case InnerSampler::Kind::Recorded:
      return "--inner-indices";
    case InnerSampler::Kind::Sequential:
      break;
  }
  return "--rank-seeds";  // a sequential list as long as the dataset, once per seed
}

namespace {

// The dataset's part, named after what declared it, then the wrapper's lists, named after
// what sets their length.
void check_sizes(const Scenario& s, int64_t n, int32_t classes, const std::string& dataset,
                 const std::string& sampler) {
  check_evaluation_budget(dataset, simulation_size(s, n, classes, false));
  check_evaluation_budget(sampler.empty() ? sampler_list_flag(s) : sampler,
                          simulation_size(s, n, classes));
}

// The whole simulation against the budget once its labels are known (a label file's largest
// class sets C): before the sampler's order, the keys or any matrix is allocated.
void check_labels_budget(const Scenario& s, int64_t n, int32_t classes) {
  check_sizes(s, n, classes, dataset_origin(s.dataset), {});
}

}  // namespace

void check_simulation_budget(const Scenario& s, const std::string& dataset_origin,
                             const std::string& sampler_origin) {
  if (const auto declared = declared_dataset(s.dataset))
    check_sizes(s, declared->samples, declared->classes, dataset_origin, sampler_origin);
}

namespace {

bool loader_exhausted(const ShardPlan& plan, const LoaderConfig& loader) {
  if (loader.drop_last) return false;
  for (const EvaluatedRank& r : plan.evaluated) {
    if (r.batches < batches_per_rank(r.sampler_size, loader)) return false;
  }
  return true;
}

void validate(const Scenario& s, const DatasetInputs& in) {
  // Samples of many cells left their ignored pixels / tokens out when the cells were made
  // (torchmetrics' ignore_index 255, the -100 of token labels): any index is allowed there.
  if (s.ignore_index >= in.classes() && !in.cells) {
    throw InputError("--ignore-index: " + std::to_string(s.ignore_index) +
                     " is not a class of this dataset");
  }
}

// The exact per-rank counts the diagnosis compares a rounding or ignoring counter with: an
// earlier evaluation's own per-rank matrices when they were exact on the same plan.
std::vector<Matrix> exact_counts(const Scenario& s, const DatasetInputs& in, const ShardPlan& plan,
                                 const Evaluation* earlier) {
  if (earlier && reusable_plan(*earlier, s, in) && earlier->plan.get() == &plan) {
    const Scenario& before = earlier->scenario();
    if (before.dtype == CounterDtype::Int64 && before.ignore_index < 0) return earlier->per_rank;
  }
  return accumulate(plan, in, CounterDtype::Int64, -1, nullptr);
}

// Copies of the earlier evaluation's per-rank matrices, at 1000 classes on two cores: a copy
// is bound by what one core moves through memory (at 64 ranks, 512 MB to read and write).
std::vector<Matrix> copied(const std::vector<Matrix>& from) {
  std::vector<Matrix> out(from.size());
  const auto copy = [&](size_t first, size_t last) {
    for (size_t k = first; k < last; ++k) out[k] = from[k];
  };
  const size_t n = from.size();
  const double cells = n == 0 ? 0.0 : double(n) * double(from.front().cells.size());
  constexpr double kHalvedCells = double(1 << 22);
  if (n < 2 || cells < kHalvedCells) {
    copy(0, n);
    return out;
  }
  auto second = std::async(std::launch::async, copy, n / 2, n);
  copy(0, n / 2);
  second.get();
  return out;
}

Evaluation evaluate_with_plan(const Scenario& s, std::shared_ptr<const DatasetInputs> inputs,
                              std::shared_ptr<const ShardPlan> plan, Progress* progress,
                              const Evaluation* earlier) {
  validate(s, *inputs);
  Evaluation e;
  e.inputs = std::move(inputs);
  const DatasetInputs& in = *e.inputs;
  e.labels = in.labels;
  e.class_groups = in.labels->hierarchy;
  RunMetadata& m = e.meta;
  m.scenario = s;
  m.classes = in.classes();
  m.class_names = class_names_or_numbers(in.labels->class_names, in.classes());
  m.class_counts = in.class_counts;
  m.task = in.task;
  m.dataset_size = in.size();
  m.dataset = s.dataset;
  m.epoch = s.sampler.epoch;
  m.world_size = s.sampler.world_size;
  m.batch_size = s.loader.batch_size;
  m.ignore_index = reported_ignore_index(s);
  m.torch_version = s.sampler.torch.to_string();
  e.plan = plan;
  e.records = std::make_shared<SimulatedRecords>(e.inputs, plan);
  step(progress, "accumulating", 0.0);
  const bool same_counts = earlier && earlier->plan == plan && reusable_counts(*earlier, s, in);
  if (same_counts)
    e.per_rank = copied(earlier->per_rank);  // not every sample counted again
  else
    e.per_rank = accumulate(*plan, in, s.dtype, s.ignore_index, progress);
  const int world = int(e.per_rank.size());
  // The ranks' int64 sum behind the shown result's reported matrix, when its counts are
  // these: a sync toggled between all-reduce and double sums no C x C cell again.
  std::optional<Matrix> rank_sum;
  if (same_counts && earlier->synced)
    rank_sum = rank_sum_from_synced(earlier->scenario().sync, earlier->scenario().dtype,
                                    *earlier->synced, world);
  SyncInputs sync;
  sync.per_rank = &e.per_rank;
  sync.records = e.records.get();
  sync.dataset_size = in.size();
  sync.batch_size = s.loader.batch_size;
  sync.loader_exhausted = loader_exhausted(*plan, s.loader);
  use_plan_batches(sync, *plan, s.loader);  // Accelerate's split batches: B / W per rank
  sync.pad_across_processes = s.pad_across_processes;
  sync.ignore_index = s.ignore_index;
  sync.dtype = s.dtype;
  if (rank_sum) e.synced = synced_from_rank_sum(s.sync, s.dtype, *rank_sum, world);
  if (!e.synced) e.synced = synchronize(s.sync, sync);
  // The plan gives coverage and duplicates without walking every record.
  std::optional<RecordStats> stats = stats_from_plan(*plan, in, progress);
  if (stats && (s.dtype != CounterDtype::Int64 || s.ignore_index >= 0)) {
    // The counter rounded or dropped: the diagnosis compares it with the exact counts.
    stats->exact_per_rank = exact_counts(s, in, *plan, earlier);
  }
  // An int64 all-reduce (or double) gives the ranks' sum the diagnosis compares with: one
  // copy, not W passes over C x C cells again.
  if (!rank_sum && e.synced) rank_sum = rank_sum_from_synced(s.sync, s.dtype, *e.synced, world);
  if (stats && rank_sum) stats->per_rank_sum = std::move(*rank_sum);
  if (same_counts)
    complete_evaluation_with_counts_of(e, *earlier, progress, std::move(stats));
  else
    complete_evaluation(e, progress, std::move(stats));
  report_framework_hazards(e);  // uneven Accelerate steps: a per-step gather would hang
  step(progress, "done", 1.0);
  return e;
}

}  // namespace

bool reusable_plan(const Evaluation& earlier, const Scenario& s, const DatasetInputs& inputs) {
  // A run file's or an import's plan (if any) is not this simulation's.
  return earlier.plan && earlier.inputs.get() == &inputs && earlier.scenario_recorded() &&
         !earlier.is_run() && earlier.meta.dataset_size == inputs.size() &&
         earlier.scenario().sampler == s.sampler && earlier.scenario().loader == s.loader;
}

bool reusable_counts(const Evaluation& earlier, const Scenario& s, const DatasetInputs& inputs) {
  return reusable_plan(earlier, s, inputs) && earlier.scenario().dtype == s.dtype &&
         earlier.scenario().ignore_index == s.ignore_index;
}

Evaluation evaluate(const Scenario& s, std::shared_ptr<const DatasetInputs> inputs,
                    Progress* progress, const Evaluation* earlier) {
  check_labels_budget(s, inputs->size(), inputs->classes());
  step(progress, "sharding", 0.0);
  std::shared_ptr<const ShardPlan> plan =
      earlier && reusable_plan(*earlier, s, *inputs)
          ? earlier->plan
          : std::make_shared<const ShardPlan>(plan_shards(inputs->size(), s.sampler, s.loader));
  return evaluate_with_plan(s, std::move(inputs), std::move(plan), progress, earlier);
}

namespace {

// The shard plan drawn on a second core. The caller's thread waits in wait(), where it moves
// the progress bar with the permutation and takes a cancel; a planner left behind by an
// exception is told to stop and waited for.
class Planner {
 public:
  explicit Planner(int64_t n, const Scenario& s)
      : m_planning(std::async(std::launch::async,
                              [this, n, &s] {
                                const ScopedDrawWatch watch(&m_watch);
                                return std::make_shared<const ShardPlan>(
                                    plan_shards(n, s.sampler, s.loader));
                              })),
        m_n(n) {}
  ~Planner() {
    if (!m_planning.valid()) return;
    m_watch.cancel = true;
    m_planning.wait();
  }
  Planner(const Planner&) = delete;
  Planner& operator=(const Planner&) = delete;

  std::shared_ptr<const ShardPlan> wait(Progress* progress) {
    using namespace std::chrono_literals;
    while (m_planning.wait_for(100ms) != std::future_status::ready) {
      step(progress, "shuffling", double(m_watch.done.load()) / double(std::max<int64_t>(m_n, 1)));
    }
    return m_planning.get();
  }

 private:
  DrawWatch m_watch;
  std::future<std::shared_ptr<const ShardPlan>> m_planning;
  int64_t m_n;
};

}  // namespace

Evaluation simulate(const Scenario& s, Progress* progress) {
  // A few thousand images or sequences: drawn and predicted before the plan, no overlap.
  if (is_dense_dataset(s.dataset)) return evaluate(s, load_dense_inputs(s, progress), progress);
  Labels labels = load_labels(s.dataset, progress);
  const int64_t n = labels.size();
  check_labels_budget(s, n, labels.num_classes);
  const std::optional<LabelPredictor> predictor = label_predictor(s.predictor);
  // The shard plan needs only the dataset size: the permutation is drawn on a second core
  // while the predictions are computed or read and packed. Keys packed in place hold one
  // array of n values beside the permutation, no more than the evaluation holds anyway;
  // predictions read beside the targets would hold a third, so past
  // kMaxOverlappedPlanSamples those load first.
  std::shared_ptr<const DatasetInputs> inputs;
  if (!predictor && n > kMaxOverlappedPlanSamples)
    inputs = inputs_of(std::move(labels), s, predictor, progress);
  Planner planner(n, s);
  if (!inputs) inputs = inputs_of(std::move(labels), s, predictor, progress);
  std::shared_ptr<const ShardPlan> plan = planner.wait(progress);
  step(progress, "sharding", 0.0);
  return evaluate_with_plan(s, std::move(inputs), std::move(plan), progress, nullptr);
}

}  // namespace shardlens

#include "core/sim/recorded_run_simulation.h"

#include <algorithm>
#include <filesystem>

#include "core/dataset/dataset_spec.h"
#include "core/evaluation/framework_hazards.h"
#include "core/sim/engine.h"
#include "core/sim/specs.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

// How many validations the epoch of `runs[which]` had: its validation numbers among the
// evaluations of the same epoch, stage and dataloader.
int validations_in_epoch(const std::vector<const Evaluation*>& runs, const Evaluation& run) {
  int count = 1;
  for (const Evaluation* p : runs)
    if (const Evaluation& e = *p; e.epoch() == run.epoch() && e.meta.stage == run.meta.stage &&
                                  e.dataloader() == run.dataloader())
      count = std::max(count, e.validation() + 1);
  return count;
}

// Out of line: GCC 12 warns falsely (-Warray-bounds) about string literals pushed inline.
[[gnu::noinline]] void assume(RecordedRunScenario& out, const char* flag, const char* text) {
  out.assumptions.push_back({flag, text});
}

// Accelerate's BatchSamplerShard settings, as the recorder's watch() read them off the
// prepared loader; each one not recorded keeps Accelerate's default, said in a note.
void set_accelerate(const RecordedSettings& r, RecordedRunScenario& out) {
  SamplerConfig& s = out.scenario.sampler;
  s.even_batches = r.even_batches.value_or(true);
  s.split_batches = r.split_batches.value_or(false);
  // The padding the recorder saw (PAD_ROW rows): the simulation pads the same steps.
  out.scenario.pad_across_processes = r.pad_across_processes.value_or(false);
  if (!r.even_batches || !r.split_batches)
    assume(out, "",
           "Accelerate's even_batches or split_batches was not recorded: the default "
           "(even_batches on, split_batches off) assumed");
  try {
    if (r.accelerate_input) s.accelerate_input = parse_accelerate_input(*r.accelerate_input);
    if (r.accelerate_shuffle)
      s.accelerate_shuffle = parse_accelerate_shuffle(*r.accelerate_shuffle);
  } catch (const InputError& e) {
    out.unrecorded.push_back({"--accelerate-input", e.what()});
  }
}

// The recorder's sampler names (settings_json) as the simulation's.
void set_sampler(const RecordedSettings& r, RecordedRunScenario& out) {
  SamplerConfig& s = out.scenario.sampler;
  const std::string kind = r.sampler.value_or("");
  if (kind == "distributed") {
    s.kind = SamplerKind::Distributed;
  } else if (kind == "wrapper") {
    s.kind = SamplerKind::LightningWrapper;
    const std::string inner = r.inner_sampler.value_or("");
    if (inner == "sequential") {
      s.inner.kind = InnerSampler::Kind::Sequential;
    } else if (inner == "weighted_random") {
      s.inner.kind = InnerSampler::Kind::WeightedRandom;
      assume(out, "--inner-weights",
             "the wrapped WeightedRandomSampler's weights were not recorded: uniform weights over "
             "the dataset assumed (pass --inner-weights and --inner-num-samples)");
    } else {
      out.unrecorded.push_back(
          {"--inner-sampler",
           "the sampler Lightning wrapped is " +
               (inner.empty() ? std::string("not recorded") : "'" + inner + "'") +
               " (give --inner-sampler recorded --inner-indices FILE)"});
    }
  } else if (kind == "unrepeated") {
    s.kind = SamplerKind::Unrepeated;
  } else if (kind == "none") {
    s.kind = SamplerKind::None;
  } else if (kind == "accelerate") {
    s.kind = SamplerKind::Accelerate;
    set_accelerate(r, out);
  } else {
    out.unrecorded.push_back(
        {"--sampler", "the run's sampler is " +
                          (kind.empty() ? std::string("not recorded")
                                        : "'" + kind + "', which ShardLens does not model")});
  }
}

// The sync the run's reported matrix went through. Accelerate's watch wraps
// gather_for_metrics (recorders before `sync` was recorded too); a run that reported no
// matrix has the sum of its ranks, which all-reduce is; else all-reduce is an assumption.
void set_sync(const RecordedSettings& r, const Evaluation& run, RecordedRunScenario& out) {
  Scenario& s = out.scenario;
  if (r.sync) {
    try {
      s.sync = parse_sync_strategy(*r.sync);
    } catch (const InputError&) {
      out.unrecorded.push_back(
          {"--sync", "the recorded sync '" + *r.sync + "' is not one ShardLens models"});
    }
  } else if (r.framework == "accelerate") {
    s.sync = SyncStrategy::GatherForMetrics;
  } else {
    s.sync = SyncStrategy::AllReduce;
    if (synced_origin_of(run.meta) == SyncedOrigin::Recorded)
      assume(out, "--sync",
             "how the reported matrix was synchronized was not recorded: all-reduce assumed "
             "(pass --sync)");
  }
}

// The loader's batch size and drop_last as recorded, or what is assumed for them.
void set_loader(const RecordedSettings& r, const Evaluation& run, RecordedRunScenario& out) {
  LoaderConfig& l = out.scenario.loader;
  if (const auto b = r.batch_size ? r.batch_size : run.meta.batch_size) {
    l.batch_size = *b;
    if (r.batch_size_source == "first-batch")
      out.assumptions.push_back(
          {"--batch-size", "the batch size " + std::to_string(*b) +
                               " is the length of the first batch the recorder saw (it was "
                               "given no loader or batch_size)"});
  } else {
    out.unrecorded.push_back({"--batch-size", "the loader's batch size was not recorded"});
  }
  l.drop_last = r.loader_drop_last.value_or(false);
  if (!r.loader_drop_last)
    assume(out, "--loader-drop-last",
           "the loader's drop_last was not recorded: False assumed (pass --loader-drop-last)");
}

// The run's dataset spec, its label file found beside the run file when the path it names
// is relative to where the run was imported (the recorders write the labels beside the
// dumps and the run file, and import them by a path relative to the training script).
std::string dataset_beside_run(const std::string& dataset, const std::string& origin) {
  namespace fs = std::filesystem;
  if (dataset.empty()) return dataset;
  try {
    const Spec spec = parse_spec(dataset, "--dataset");
    const fs::path path(spec.path);
    if (spec.path.empty() || path.is_absolute() || fs::exists(path)) return dataset;
    const fs::path beside = fs::path(origin).parent_path() / path.filename();
    const size_t at = dataset.find(spec.path, spec.kind.size());
    if (at == std::string::npos || !fs::exists(beside)) return dataset;
    return dataset.substr(0, at) + beside.string() + dataset.substr(at + spec.path.size());
  } catch (const InputError&) {
    return dataset;  // its reader names what is wrong
  }
}

}  // namespace

RecordedRunScenario recorded_run_scenario(const std::vector<Evaluation>& runs, size_t which,
                                          const std::string& origin) {
  std::vector<const Evaluation*> all;
  for (const Evaluation& e : runs) all.push_back(&e);
  return recorded_run_scenario(all, which, origin);
}

RecordedRunScenario recorded_run_scenario(const std::vector<const Evaluation*>& runs, size_t which,
                                          const std::string& origin) {
  const Evaluation& run = *runs.at(which);
  RecordedRunScenario out;
  Scenario& s = out.scenario;
  if (run.scenario_recorded()) {
    // Made by ShardLens (a saved simulation, `shardlens-cli run`): its own scenario.
    s = run.scenario();
    return out;
  }
  if (!run.meta.recorded)
    throw InputError(origin +
                     ": records no settings (no scenario, and its dumps carry no settings_json: "
                     "an older recorder, or dumps written by hand), so there is nothing to "
                     "simulate it like; simulate with explicit flags (--world-size, --batch-size, "
                     "--sampler, --shuffle, --seed, --epoch, --limit-batches) and compare the "
                     "result with `shardlens-cli compare`");
  const RecordedSettings& r = *run.meta.recorded;
  const std::string stem = std::filesystem::path(origin).stem().string();
  s.name = stem + "-like";
  s.title = "Simulation like " + stem + " (" + evaluation_label(run) + ")";
  s.dataset = dataset_beside_run(run.meta.dataset, origin);
  s.predictor.clear();  // the run's own predictions unless one is given
  // A negative ignore index (the -100 of token labels) drops no class: the setting's "none".
  s.ignore_index = std::max(run.meta.ignore_index, -1);
  s.sampler.world_size = int(r.world_size.value_or(run.meta.world_size));
  set_sampler(r, out);
  if (r.shuffle) {
    s.sampler.shuffle = *r.shuffle;
  } else {
    out.unrecorded.push_back({"--shuffle", "whether the sampler shuffled was not recorded"});
  }
  if (r.seed) {
    s.sampler.seed = *r.seed;
  } else if (s.sampler.shuffle || s.sampler.inner.kind == InnerSampler::Kind::WeightedRandom) {
    const SamplerConfig& c = s.sampler;
    const bool global_rng = c.kind == SamplerKind::Accelerate &&
                            c.accelerate_input == AccelerateInput::Loader &&
                            c.accelerate_shuffle == AccelerateShuffle::GlobalRng;
    out.unrecorded.push_back(
        {"--seed", global_rng ? "the shuffle is Accelerate's default draw from the global RNG "
                                "(use_seedable_sampler=False), which no recorder can read back: "
                                "the seed of torch.manual_seed before accelerator.prepare()"
                              : "the sampler's seed was not recorded"});
  }
  if (r.sampler_epoch) {
    s.sampler.epoch = *r.sampler_epoch;
  } else {
    s.sampler.epoch = run.epoch();
    // Only a shuffled or drawn order depends on it.
    if (s.sampler.shuffle || s.sampler.inner.kind == InnerSampler::Kind::WeightedRandom)
      out.assumptions.push_back({"", "the sampler's epoch was not recorded: the run's epoch " +
                                         std::to_string(run.epoch()) + " assumed"});
  }
  s.sampler.drop_last = r.sampler_drop_last.value_or(false);
  set_loader(r, run, out);
  try {
    if (r.limit_batches) s.loader.limit = BatchLimit::parse(*r.limit_batches);
  } catch (const InputError&) {
    out.unrecorded.push_back({"--limit-batches", "the recorded limit '" + *r.limit_batches +
                                                     "' is not an int or a fraction"});
  }
  // -1 is Lightning's "every batch": more steps than any loader has batches.
  constexpr int64_t kEveryBatch = int64_t(1) << 20;
  if (r.sanity_steps)
    s.loader.sanity_steps =
        int(*r.sanity_steps < 0 ? kEveryBatch : std::min(*r.sanity_steps, kEveryBatch));
  if (auto it = r.versions.find("torch"); it != r.versions.end()) {
    try {
      s.sampler.torch = TorchVersion::parse(it->second);
    } catch (const InputError&) {
      out.assumptions.push_back(
          {"--torch-version", "torch version '" + it->second + "' not understood: " +
                                  s.sampler.torch.to_string() + " assumed (pass --torch-version)"});
    }
  } else {
    out.assumptions.push_back(
        {"--torch-version", "torch's version was not recorded: " + s.sampler.torch.to_string() +
                                "'s semantics assumed (pass --torch-version)"});
  }
  set_sync(r, run, out);
  s.validations_per_epoch = validations_in_epoch(runs, run);
  return out;
}

namespace {

// A run whose samples count many cells: each dataset index's cells as its first record
// counted them (an evaluation in eval mode gives a duplicate the same pixels), an empty row
// for a sample never evaluated, which simulate_recorded_run checks no simulation reads.
RecordedRunInputs cell_inputs(const Evaluation& run, const CellTable& recorded,
                              const std::string& origin) {
  RecordedRunInputs out;
  out.origin = origin;
  const int64_t n = run.meta.dataset_size;
  std::vector<int64_t> row_of(size_t(n), -1);
  for (int r = 0; r < run.records->world_size(); ++r)
    for_each_record(*run.records, r, [&](const Record& rec) {
      if (rec.index >= 0 && rec.index < n && row_of[size_t(rec.index)] < 0 && rec.cells != kOneCell)
        row_of[size_t(rec.index)] = rec.cells;
    });
  auto cells = std::make_shared<CellTable>();
  cells->classes = recorded.classes;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = row_of[size_t(i)];
    if (row < 0)
      cells->add_row({}, {});
    else
      cells->add_row(recorded.keys_of(row), recorded.counts_of(row));
  }
  out.partial = std::count(row_of.begin(), row_of.end(), -1) > 0;
  if (out.partial) {
    out.evaluated.resize(size_t(n));
    for (size_t i = 0; i < row_of.size(); ++i) out.evaluated[i] = row_of[i] >= 0;
  }
  out.labels_known = !out.partial;
  Labels labels;
  labels.source = origin + " (cells as recorded)";
  if (run.meta.class_names != class_names_or_numbers({}, run.classes()))
    labels.class_names = run.meta.class_names;
  out.inputs = make_cell_inputs(std::move(cells), run.meta.task, std::move(labels));
  return out;
}

}  // namespace

RecordedRunInputs recorded_run_inputs(const Evaluation& run, const Scenario& s, bool use_predictor,
                                      const std::string& origin) {
  RecordedRunInputs out;
  out.origin = origin;
  if (use_predictor) {
    if (s.dataset.empty())
      throw InputError(origin + ": the run does not name its dataset; pass --dataset SPEC");
    out.inputs = load_inputs(s);
    return out;
  }
  // The run's own predictions and targets: one per dataset index evaluated, first record
  // wins. A sample never evaluated holds a placeholder (class 0) that no simulation of the
  // run's settings reads: simulate_recorded_run checks that it did not.
  const int64_t n = run.meta.dataset_size;
  if (n == 0)
    throw InputError(origin + ": the run does not know its dataset size; pass --predictor " +
                     "(e.g. npy:PREDICTIONS.npy, one prediction per dataset index) and --dataset");
  if (const CellTable* cells = run.records->cell_table()) return cell_inputs(run, *cells, origin);
  std::vector<int32_t> prediction(size_t(n), -1), target(size_t(n), -1);
  for (int r = 0; r < run.records->world_size(); ++r)
    for_each_record(*run.records, r, [&](const Record& rec) {
      if (rec.index < 0 || rec.index >= n || prediction[size_t(rec.index)] >= 0) return;
      prediction[size_t(rec.index)] = rec.prediction;
      target[size_t(rec.index)] = rec.target;
    });
  out.partial = std::count(prediction.begin(), prediction.end(), -1) > 0;
  if (out.partial) {
    out.evaluated.resize(size_t(n));
    for (size_t i = 0; i < prediction.size(); ++i) out.evaluated[i] = prediction[i] >= 0;
  }
  auto labels = std::make_shared<Labels>();
  if (!s.dataset.empty()) {
    *labels = load_labels(s.dataset);
    if (labels->size() != n || labels->num_classes != run.classes())
      throw InputError(origin + ": " + s.dataset + " has " + std::to_string(labels->size()) +
                       " samples of " + std::to_string(labels->num_classes) + " classes, the run " +
                       std::to_string(n) + " of " + std::to_string(run.classes()));
  } else {
    for (size_t i = 0; i < target.size(); ++i) {
      if (prediction[i] < 0) {
        target[i] = 0;  // never evaluated: unknown
        continue;
      }
      if (target[i] < 0 || target[i] >= run.classes())
        throw InputError(origin +
                         ": a recorded target is outside the classes (ignore_index?); "
                         "pass --dataset SPEC for the true classes");
    }
    labels->targets = std::move(target);
    labels->num_classes = run.classes();
    labels->source = origin + " (targets as recorded)";
    if (run.meta.class_names != class_names_or_numbers({}, run.classes()))
      labels->class_names = run.meta.class_names;
    out.labels_known = !out.partial;
  }
  for (int32_t& p : prediction) p = std::max(p, 0);
  out.inputs = make_inputs(std::move(labels), std::move(prediction));
  return out;
}

namespace {

// The samples a simulation evaluated that the run never did: how many, and the first.
std::pair<int64_t, int64_t> evaluated_beyond(const Evaluation& sim,
                                             const std::vector<bool>& evaluated) {
  const Coverage& simulated = sim.times_evaluated;
  int64_t count = 0, first = -1;
  for (size_t i = 0; i < simulated.size() && i < evaluated.size(); ++i)
    if (simulated[i] > 0 && !evaluated[i]) {
      if (first < 0) first = int64_t(i);
      ++count;
    }
  return {count, first};
}

}  // namespace

Evaluation simulate_recorded_run(const Scenario& s, const Evaluation& run,
                                 const RecordedRunInputs& inputs) {
  Scenario one = s;
  // The wrapped sampler's pass, as simulate_validations numbers it.
  if (s.validations_per_epoch > 1 && run.validation() >= 0)
    one.sampler.inner_iteration = s.sampler.epoch * s.validations_per_epoch + run.validation();
  Evaluation e = evaluate(one, inputs.inputs);
  e.meta.validation_in_epoch = run.meta.validation_in_epoch;
  e.meta.dataloader_idx = run.meta.dataloader_idx;
  e.meta.stage = run.meta.stage;
  if (!inputs.partial) return e;
  if (const auto [count, first] = evaluated_beyond(e, inputs.evaluated); count > 0)
    throw InputError(inputs.origin + " (" + evaluation_label(run) + "): the simulation evaluates " +
                     std::to_string(count) + " sample(s) the run never evaluated (index " +
                     std::to_string(first) + " first), whose predictions" +
                     (inputs.labels_known ? "" : " and labels") +
                     " the run does not know: pass --predictor (e.g. npy:PREDICTIONS.npy, one "
                     "prediction per dataset index)" +
                     (inputs.labels_known ? "" : " and --dataset SPEC") +
                     ", or check the settings the simulation used");
  // Diagnosed as the run was, from what was evaluated: the placeholders made no expected
  // matrix and, with the labels unknown, the class counts are the run's own estimate.
  e.inputs.reset();
  e.expected.reset();
  if (!inputs.labels_known) {
    e.meta.class_counts = run.meta.class_counts;
    e.meta.class_counts_source = run.meta.class_counts_source;
  }
  complete_evaluation(e);
  report_framework_hazards(e);
  return e;
}

}  // namespace shardlens

#include "core/runfile/run_evaluation.h"

#include <filesystem>

#include "core/dataset/dataset_spec.h"
#include "core/vocabulary/types.h"

namespace shardlens {

Evaluation evaluation_from_run(RunFile run, const std::string& origin) {
  Evaluation e;
  e.meta = std::move(run.meta);
  e.provenance.file = origin;
  RunMetadata& m = e.meta;
  // What an Evaluation holds that a run file may leave out: a name per class, the dataset
  // its scenario names and the epoch (its sampler's when not recorded).
  m.class_names = class_names_or_numbers(m.class_names, m.classes);
  if (m.scenario) m.dataset = m.scenario->dataset;
  if (!m.epoch) m.epoch = m.scenario ? m.scenario->sampler.epoch : 0;
  // A run without a scenario (an import) is shown with a stand-in read with the torch it
  // recorded, else the default (TorchVersion::parse_recorded says which texts count); a real
  // run's is the LibTorch that ran it, unless --torch-version said otherwise.
  Scenario& shown = m.scenario ? *m.scenario : e.stand_in;
  if (!m.scenario) {
    if (const auto torch = TorchVersion::parse_recorded(m.torch_version))
      shown.sampler.torch = *torch;
  }
  const std::string stem = std::filesystem::path(origin).stem().string();
  if (shown.name.empty()) shown.name = stem;
  if (shown.title.empty()) shown.title = stem + " (" + m.source + " run)";
  e.reported_per_rank = std::move(run.reported_per_rank);
  e.per_rank = std::move(run.per_rank);
  if (run.has_synced()) e.synced = std::move(run.synced);
  e.expected = std::move(run.expected);
  e.records = std::make_shared<const StoredRecords>(std::move(run.records));
  complete_evaluation(e);
  return e;
}

Evaluation select_epoch(std::vector<Evaluation> epochs, int64_t epoch, const std::string& origin) {
  std::string list;
  for (Evaluation& e : epochs) {
    if (e.epoch() == epoch) return std::move(e);
    list += (list.empty() ? "" : ", ") + std::to_string(e.epoch());
  }
  throw InputError(origin + ": holds epoch" + (epochs.size() == 1 ? " " : "s ") + list +
                   "; no epoch " + std::to_string(epoch));
}

std::string attach_dataset_labels(Evaluation& e) {
  if (e.labels) return {};
  if (e.meta.dataset.empty()) return "the run does not name its dataset";
  try {
    auto labels = std::make_shared<const Labels>(load_labels(e.meta.dataset));
    if (labels->size() != e.meta.dataset_size || labels->num_classes != e.classes())
      return e.meta.dataset + " has " + std::to_string(labels->size()) + " samples of " +
             std::to_string(labels->num_classes) + " classes, the run " +
             std::to_string(e.meta.dataset_size) + " of " + std::to_string(e.classes());
    e.labels = std::move(labels);
    return {};
  } catch (const InputError& error) {
    return error.what();
  }
}

Evaluation load_run_evaluation(const std::string& path) {
  return evaluation_from_run(load_run_file(path), path);
}

namespace {

// Each rank's dataset indices in the order it evaluated them.
std::vector<std::vector<int64_t>> rank_orders(const Evaluation& e) {
  std::vector<std::vector<int64_t>> out;
  if (!e.records) return out;
  for (int r = 0; r < e.records->world_size(); ++r) {
    out.emplace_back();
    for_each_record(*e.records, r, [&](const Record& rec) { out.back().push_back(rec.index); });
  }
  return out;
}

// A shuffled order changes from epoch to epoch only where the run's epochs show it: an
// evaluation's shuffled-eval finding says so once another epoch of the same stage and loader
// evaluated its ranks in other orders (one epoch alone shows one order).
void mark_reshuffled_epochs(std::vector<Evaluation>& epochs) {
  std::vector<std::vector<std::vector<int64_t>>> orders;
  for (const Evaluation& e : epochs) orders.push_back(rank_orders(e));
  for (size_t i = 0; i < epochs.size(); ++i) {
    bool changed = false;
    for (size_t j = 0; j < epochs.size() && !changed; ++j)
      changed = epochs[j].epoch() != epochs[i].epoch() &&
                epochs[j].meta.stage == epochs[i].meta.stage &&
                epochs[j].dataloader() == epochs[i].dataloader() && !orders[i].empty() &&
                orders[j] != orders[i];
    if (!changed) continue;
    for (Finding& f : epochs[i].diagnosis.findings)
      if (f.pattern == Pattern::ShuffledEval) f.facts.reshuffled_each_epoch = true;
  }
}

}  // namespace

std::vector<Evaluation> evaluations_from_runs(std::vector<RunFile> runs,
                                              const std::string& origin) {
  std::vector<Evaluation> out;
  for (RunFile& run : runs) out.push_back(evaluation_from_run(std::move(run), origin));
  mark_reshuffled_epochs(out);
  return out;
}

std::vector<Evaluation> load_run_evaluations(const std::string& path) {
  std::vector<Evaluation> out = evaluations_from_runs(load_run_epochs(path), path);
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].provenance.epochs = out.size();
    out[k].provenance.epoch_index = k;
  }
  return out;
}

std::string run_label(const RunMetadata& meta) {
  Evaluation e;  // only the fields the label reads
  e.meta.epoch = meta.epoch.value_or(0);
  e.meta.stage = meta.stage;
  e.meta.validation_in_epoch = meta.validation_in_epoch;
  e.meta.dataloader_idx = meta.dataloader_idx;
  return evaluation_label(e);
}

RunFile run_from_evaluation(const Evaluation& e) {
  RunFile run;
  run.meta = e.meta;
  run.meta.created_by.clear();  // the file is written by this program (meta.json says which)
  // Names that are only the class numbers are not stored.
  run.meta.classes = e.classes();
  if (e.meta.class_names == class_names_or_numbers({}, e.classes())) run.meta.class_names.clear();
  run.reported_per_rank = e.reported_per_rank;
  run.records.ranks.resize(size_t(e.meta.world_size));
  for (int r = 0; r < e.meta.world_size; ++r) {
    auto& out = run.records.ranks[size_t(r)];
    out.reserve(static_cast<size_t>(e.records->rank_size(r)));
    for_each_record(*e.records, r, [&](const Record& rec) { out.push_back(rec); });
  }
  // The rows the records name (a simulation's dataset rows, an import's own), shared with the
  // evaluation rather than copied.
  if (const CellTable* cells = e.records->cell_table())
    run.records.cells = std::shared_ptr<const CellTable>(e.records, cells);
  run.per_rank = e.per_rank;
  if (e.synced) run.synced = *e.synced;
  run.expected = e.expected;
  return run;
}

std::string run_summary(const RunMetadata& meta) {
  std::string s = meta.source + ", " + std::to_string(meta.world_size) +
                  (meta.world_size == 1 ? " rank, " : " ranks, ");
  s += meta.complete ? "complete" : "incomplete";
  return s;
}

}  // namespace shardlens

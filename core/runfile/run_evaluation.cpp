#include "core/runfile/run_evaluation.h"

#include <filesystem>

#include "core/model/types.h"
#include "core/dataset/dataset_spec.h"

namespace shardlens {

Evaluation evaluation_from_run(RunFile run, const std::string& origin) {
  const RunMeta& m = run.meta;
  Evaluation e;
  const std::string stem = std::filesystem::path(origin).stem().string();
  if (m.scenario) e.scenario = *m.scenario;
  // The torch a run imitated is its scenario's (a real run's is the LibTorch that ran it,
  // unless --torch-version said otherwise); a run without one (an import) is read with the
  // torch it recorded, else the default (TorchVersion::parse_recorded says which texts count).
  if (!m.scenario) {
    if (const auto torch = TorchVersion::parse_recorded(m.torch_version))
      e.scenario.sampler.torch = *torch;
  }
  if (e.scenario.name.empty()) e.scenario.name = stem;
  if (e.scenario.title.empty()) e.scenario.title = stem + " (" + m.source + " run)";
  Provenance& p = e.provenance;
  p.source = m.source;
  p.backend = m.backend;
  p.torch_version = m.torch_version;
  p.created_by = m.created_by;
  p.file = origin;
  p.scenario_recorded = m.scenario.has_value();
  p.complete = m.complete;
  p.incomplete_reason = m.incomplete_reason;
  p.sync_note = m.sync_note;
  p.launcher = m.launcher;
  p.class_counts_source = m.class_counts_source;
  p.recorded = m.recorded;
  e.stage = m.stage;
  if (m.validation_in_epoch) e.validation = int(*m.validation_in_epoch);
  if (m.dataloader_idx) e.dataloader = int(*m.dataloader_idx);
  e.class_names = class_names_or_numbers(m.class_names, m.classes);
  e.class_counts = m.class_counts;
  e.dataset_size = m.dataset_size;
  e.dataset = m.scenario ? m.scenario->dataset : m.dataset;
  e.epoch = m.epoch ? *m.epoch : m.scenario ? m.scenario->sampler.epoch : 0;
  e.reported_per_rank = std::move(run.reported_per_rank);
  e.world_size = m.world_size;
  e.batch_size = m.batch_size;
  e.ignore_index = m.ignore_index;
  e.failed_ranks = m.failed_ranks;
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
    if (e.epoch == epoch) return std::move(e);
    list += (list.empty() ? "" : ", ") + std::to_string(e.epoch);
  }
  throw InputError(origin + ": holds epoch" + (epochs.size() == 1 ? " " : "s ") + list +
                   "; no epoch " + std::to_string(epoch));
}

std::string attach_dataset_labels(Evaluation& e) {
  if (e.labels) return {};
  if (e.dataset.empty()) return "the run does not name its dataset";
  try {
    auto labels = std::make_shared<const Labels>(load_labels(e.dataset));
    if (labels->size() != e.dataset_size || labels->num_classes != e.classes())
      return e.dataset + " has " + std::to_string(labels->size()) + " samples of " +
             std::to_string(labels->num_classes) + " classes, the run " +
             std::to_string(e.dataset_size) + " of " + std::to_string(e.classes());
    e.labels = std::move(labels);
    return {};
  } catch (const InputError& error) {
    return error.what();
  }
}

Evaluation load_run_evaluation(const std::string& path) {
  return evaluation_from_run(load_run_file(path), path);
}

std::vector<Evaluation> load_run_evaluations(const std::string& path) {
  std::vector<Evaluation> out;
  std::vector<RunFile> runs = load_run_epochs(path);
  for (RunFile& run : runs) out.push_back(evaluation_from_run(std::move(run), path));
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].provenance.epochs = out.size();
    out[k].provenance.epoch_index = k;
  }
  return out;
}

std::string run_label(const RunMeta& m) {
  Evaluation e;  // only the fields the label reads
  e.epoch = m.epoch.value_or(0);
  e.stage = m.stage;
  if (m.validation_in_epoch) e.validation = int(*m.validation_in_epoch);
  if (m.dataloader_idx) e.dataloader = int(*m.dataloader_idx);
  return evaluation_label(e);
}

RunFile run_from_evaluation(const Evaluation& e) {
  RunFile run;
  RunMeta& m = run.meta;
  const Provenance& p = e.provenance;
  m.source = p.source;
  m.backend = p.backend;
  m.torch_version = p.torch_version;
  if (p.scenario_recorded) m.scenario = e.scenario;
  m.classes = e.classes();
  // Names that are only the class numbers are not stored.
  if (e.class_names != class_names_or_numbers({}, e.classes())) m.class_names = e.class_names;
  m.class_counts = e.class_counts;
  m.class_counts_source = p.class_counts_source;
  m.dataset_size = e.dataset_size;
  m.dataset = e.dataset;
  m.epoch = e.epoch;
  run.reported_per_rank = e.reported_per_rank;
  m.world_size = e.world_size;
  m.batch_size = e.batch_size;
  m.ignore_index = e.ignore_index;
  m.complete = p.complete;
  m.incomplete_reason = p.incomplete_reason;
  m.failed_ranks = e.failed_ranks;
  m.sync_note = p.sync_note;
  m.launcher = p.launcher;
  m.recorded = p.recorded;
  m.stage = e.stage;
  if (e.validation >= 0) m.validation_in_epoch = e.validation;
  if (e.dataloader >= 0) m.dataloader_idx = e.dataloader;
  run.records.ranks.resize(size_t(e.world_size));
  for (int r = 0; r < e.world_size; ++r) {
    auto& out = run.records.ranks[size_t(r)];
    out.reserve(static_cast<size_t>(e.records->rank_size(r)));
    for_each_record(*e.records, r, [&](const Record& rec) { out.push_back(rec); });
  }
  run.per_rank = e.per_rank;
  if (e.synced) run.synced = *e.synced;
  run.expected = e.expected;
  return run;
}

std::string run_summary(const Provenance& provenance, int world_size) {
  std::string s = provenance.source + ", " + std::to_string(world_size) +
                  (world_size == 1 ? " rank, " : " ranks, ");
  s += provenance.complete ? "complete" : "incomplete";
  return s;
}

}  // namespace shardlens

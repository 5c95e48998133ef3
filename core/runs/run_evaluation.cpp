#include "core/runs/run_evaluation.h"

#include <filesystem>

namespace shardlens {

Evaluation evaluation_from_run(RunFile run, const std::string& origin) {
  const RunMeta& m = run.meta;
  Evaluation e;
  const std::string stem = std::filesystem::path(origin).stem().string();
  if (m.scenario) e.scenario = *m.scenario;
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
  p.class_counts_source = m.class_counts_source;
  e.class_names = class_names_or_numbers(m.class_names, m.classes);
  e.class_counts = m.class_counts;
  e.dataset_size = m.dataset_size;
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

Evaluation load_run_evaluation(const std::string& path) {
  return evaluation_from_run(load_run_file(path), path);
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
  m.world_size = e.world_size;
  m.batch_size = e.batch_size;
  m.ignore_index = e.ignore_index;
  m.complete = p.complete;
  m.incomplete_reason = p.incomplete_reason;
  m.failed_ranks = e.failed_ranks;
  m.sync_note = p.sync_note;
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

#include "core/run_view.h"

#include <algorithm>
#include <filesystem>

namespace shardlens {
namespace {

// One count per distinct sample: what a single process would report on the samples the
// run evaluated (padding and sanity copies of an index count once).
Matrix distinct_matrix(const StoredRecords& records, int32_t classes, int64_t n, int ignore_index) {
  Matrix m(classes);
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(n, 0)), false);
  for (const auto& rank : records.ranks)
    for (const Record& r : rank) {
      if (r.index < 0 || r.index >= n || seen[size_t(r.index)]) continue;
      seen[size_t(r.index)] = true;
      if (r.target == ignore_index || r.target < 0 || r.target >= classes || r.prediction < 0 ||
          r.prediction >= classes)
        continue;
      m.at(r.target, r.prediction) += 1;
    }
  return m;
}

}  // namespace

std::vector<uint8_t> times_evaluated(const StoredRecords& records, int64_t dataset_size) {
  std::vector<uint8_t> times(static_cast<size_t>(std::max<int64_t>(dataset_size, 0)), 0);
  for (const auto& rank : records.ranks)
    for (const Record& r : rank)
      if (r.index >= 0 && r.index < dataset_size && times[size_t(r.index)] < 255)
        ++times[size_t(r.index)];
  return times;
}

Evaluation evaluation_from_run(const RunFile& run, const std::string& origin) {
  const RunMeta& m = run.meta;
  Evaluation e;
  e.diagnosis = diagnose_run(run, origin);  // first: it rejects runs that never synced
  if (m.scenario) e.scenario = *m.scenario;
  const std::string stem = std::filesystem::path(origin).stem().string();
  if (e.scenario.name.empty()) e.scenario.name = stem;
  if (e.scenario.title.empty()) e.scenario.title = stem + " (" + m.source + " run)";
  auto labels = std::make_shared<Labels>();
  labels->num_classes = m.classes;
  labels->class_names = m.class_names;
  labels->source = origin;
  auto inputs = std::make_shared<DatasetInputs>();
  inputs->labels = std::move(labels);  // no keys: predictions are known per record only
  e.inputs = std::move(inputs);
  e.plan.n = m.dataset_size;
  e.plan.world_size = m.world_size;
  if (m.batch_size) e.plan.batch_size = *m.batch_size;
  e.per_rank = run.per_rank;
  e.synced = run.synced;
  if (run.expected) e.expected = *run.expected;  // else classes == 0: unknown
  e.expected_distinct = distinct_matrix(run.records, m.classes, m.dataset_size, m.ignore_index);
  e.class_counts = m.class_counts;
  e.times_evaluated = times_evaluated(run.records, m.dataset_size);
  return e;
}

std::string run_summary(const RunMeta& meta) {
  std::string s = meta.source + ", " + std::to_string(meta.world_size) +
                  (meta.world_size == 1 ? " rank, " : " ranks, ");
  s += meta.complete ? "complete" : "incomplete";
  return s;
}

}  // namespace shardlens

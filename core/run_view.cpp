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

// The first cause only: a launcher lists the failed rank first and then every rank that
// failed because of it, which the run banner shows in full.
std::string first_cause(const std::string& reason) {
  const size_t end = reason.find("; ");
  return end == std::string::npos ? reason : reason.substr(0, end) + "; …";
}

// The diagnosis of a run with no synced matrix: coverage from the records, and why no row
// can be checked.
Diagnosis incomplete_diagnosis(const RunFile& run, const std::vector<uint8_t>& times) {
  Diagnosis d;
  d.correct = false;
  for (int64_t c : run.meta.class_counts) d.expected_total += c;
  for (const auto& rank : run.records.ranks) d.evaluated_records += int64_t(rank.size());
  for (uint8_t t : times) {
    d.distinct_evaluated += t > 0;
    d.duplicated_samples += t > 1;
    d.missing_samples += t == 0;
  }
  Finding f;
  f.pattern = "incomplete-run";
  f.title = "Incomplete run: nothing was synchronized";
  f.explanation = "The run ended before its sync (" + first_cause(incomplete_reason(run.meta)) +
                  "), so there is no reported matrix to check. The per-rank matrices and records "
                  "show what each rank had counted when it stopped.";
  f.fixes.push_back({"PyTorch",
                     "Rerun; if the same rank fails again, read its log. A collective that "
                     "times out on a slow rank needs a longer --timeout (init_process_group's "
                     "timeout)."});
  d.findings.push_back(std::move(f));
  return d;
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
  if (run.has_synced()) e.diagnosis = diagnose_run(run, origin);
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
  e.failed_ranks = m.failed_ranks;
  e.synced = run.has_synced() ? run.synced : Matrix(m.classes);
  if (run.expected) e.expected = *run.expected;  // else classes == 0: unknown
  e.expected_distinct = distinct_matrix(run.records, m.classes, m.dataset_size, m.ignore_index);
  e.class_counts = m.class_counts;
  e.times_evaluated = times_evaluated(run.records, m.dataset_size);
  if (!run.has_synced()) {
    e.synced_missing = "the run ended before its sync (" + first_cause(incomplete_reason(m)) + ")";
    e.diagnosis = incomplete_diagnosis(run, e.times_evaluated);
  }
  return e;
}

std::string run_summary(const RunMeta& meta) {
  std::string s = meta.source + ", " + std::to_string(meta.world_size) +
                  (meta.world_size == 1 ? " rank, " : " ranks, ");
  s += meta.complete ? "complete" : "incomplete";
  return s;
}

}  // namespace shardlens

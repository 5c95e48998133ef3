#include "core/evaluation/evaluation.h"

#include <algorithm>

namespace shardlens {
namespace {

Matrix bincount_where(const DatasetInputs& in, const std::vector<uint8_t>* only_evaluated) {
  Matrix m(in.classes());
  for (size_t i = 0; i < in.keys.size(); ++i) {
    if (!only_evaluated || (*only_evaluated)[i] > 0) m.cells[in.keys[i]] += 1;
  }
  return m;
}

// One count per distinct evaluated sample, from the records: the truth about the samples the
// ranks evaluated (padding and sanity copies count once). Like the simulation's expected
// matrices, ignored targets are counted: what the metric dropped is what the views show.
Matrix distinct_from_records(const RecordSource& records, int32_t classes, int64_t n) {
  Matrix m(classes);
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(n, 0)), false);
  for (int rank = 0; rank < records.world_size(); ++rank)
    for_each_record(records, rank, [&](const Record& r) {
      if (r.index < 0 || r.index >= n || seen[size_t(r.index)]) return;
      seen[size_t(r.index)] = true;
      if (r.target < 0 || r.target >= classes || r.prediction < 0 || r.prediction >= classes)
        return;
      m.at(r.target, r.prediction) += 1;
    });
  return m;
}

// The first cause only: a launcher lists the failed rank first and then every rank that
// failed because of it, which the run banner shows in full.
std::string first_cause(const std::string& reason) {
  if (reason.empty()) return "no reason recorded";
  const size_t end = reason.find("; ");
  return end == std::string::npos ? reason : reason.substr(0, end) + "; …";
}

}  // namespace

std::vector<std::string> class_names_or_numbers(const std::vector<std::string>& names,
                                                int32_t classes) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(classes));
  for (int32_t c = 0; c < classes; ++c)
    out.push_back(static_cast<size_t>(c) < names.size() ? names[size_t(c)] : std::to_string(c));
  return out;
}

std::optional<Matrix> Evaluation::difference() const {
  if (!synced || !expected) return std::nullopt;
  Matrix d = *synced;
  for (size_t i = 0; i < d.cells.size(); ++i) d.cells[i] -= expected->cells[i];
  return d;
}

std::vector<uint8_t> times_evaluated(const RecordSource& records, int64_t dataset_size) {
  std::vector<uint8_t> times(static_cast<size_t>(std::max<int64_t>(dataset_size, 0)), 0);
  for (int rank = 0; rank < records.world_size(); ++rank)
    for_each_record(records, rank, [&](const Record& r) {
      if (r.index >= 0 && r.index < dataset_size && times[size_t(r.index)] < 255)
        ++times[size_t(r.index)];
    });
  return times;
}

void complete_evaluation(Evaluation& e, std::optional<std::vector<uint8_t>> times,
                         Progress* progress) {
  step(progress, "expected", 0.0);
  e.times_evaluated = times ? std::move(*times) : times_evaluated(*e.records, e.dataset_size);
  if (e.inputs) {
    if (!e.expected) e.expected = bincount_where(*e.inputs, nullptr);
    e.expected_distinct = bincount_where(*e.inputs, &e.times_evaluated);
  } else {
    e.expected_distinct = distinct_from_records(*e.records, e.classes(), e.dataset_size);
    const int64_t never = std::count(e.times_evaluated.begin(), e.times_evaluated.end(), 0);
    if (!e.expected && never == 0 && e.dataset_size > 0) {
      // Every sample was evaluated, so every prediction is known.
      e.expected = e.expected_distinct;
    } else if (!e.expected) {
      e.expected_missing =
          std::to_string(never) + " of " + std::to_string(e.dataset_size) +
          " samples were never evaluated, so their predictions are unknown (import with "
          "--predictions FILE, one prediction per dataset index, to give them)";
    }
  }
  step(progress, "diagnosing", 0.0);
  if (!e.synced) {
    const std::string why = first_cause(e.provenance.incomplete_reason);
    e.synced_missing = "the run ended before its sync (" + why + ")";
    e.diagnosis = diagnose_incomplete(*e.records, e.class_counts, e.times_evaluated, why);
    return;
  }
  DiagnosisInput d;
  d.records = e.records.get();
  d.per_rank = &e.per_rank;
  d.reported = &*e.synced;
  d.class_counts = e.class_counts;
  d.dataset_size = e.dataset_size;
  d.expected = e.expected ? &*e.expected : nullptr;
  d.targets = e.labels ? &e.labels->targets : nullptr;
  d.distinct = &e.expected_distinct;
  d.batch_size = e.batch_size;
  d.reported_per_rank = e.reported_per_rank.empty() ? nullptr : &e.reported_per_rank;
  d.ignore_index = e.ignore_index;
  if (e.provenance.scenario_recorded) d.sampler = e.scenario.sampler.kind;
  e.diagnosis = diagnose(d);
}

}  // namespace shardlens

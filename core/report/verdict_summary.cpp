#include "core/report/verdict_summary.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/diagnosis/catalogue.h"

namespace shardlens {

using nlohmann::json;

namespace {

// As the full report writes a number: an integer where whole, "inf"/"nan" where not finite.
json number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) return static_cast<int64_t>(v);
  if (!std::isfinite(v)) return v > 0 ? "inf" : "nan";
  return v;
}

json row_difference(const Evaluation& e) {
  json rows = json::array();
  const RowCheck& check = e.row_check;
  for (size_t r = 0; r < check.off.size(); ++r)
    if (check.off[r] != 0) rows.push_back({static_cast<int64_t>(r), number(check.off[r])});
  return rows;
}

json cell_difference(const Matrix& synced, const Matrix& expected) {
  json cells = json::array();
  for (int32_t r = 0; r < synced.classes; ++r) {
    for (int32_t c = 0; c < synced.classes; ++c) {
      const double d = synced.at(r, c) - expected.at(r, c);
      if (d != 0) cells.push_back({r, c, number(d)});
    }
  }
  return cells;
}

}  // namespace

json verdict_summary_json(const Evaluation& e) {
  json patterns = json::array();
  for (const Finding& f : e.diagnosis.findings) patterns.push_back(pattern_id(f.pattern));
  json mismatched = json::array();
  if (e.synced)
    for (int32_t r : e.row_check.wrong_rows) mismatched.push_back(static_cast<int64_t>(r));
  json out = {{"classes", e.classes()},
              {"correct", e.diagnosis.correct},
              {"duplicated_samples", e.diagnosis.duplicated_samples},
              {"missing_samples", e.diagnosis.missing_samples},
              {"mismatched_rows", mismatched},
              {"patterns", patterns},
              {"row_difference", e.synced ? row_difference(e) : json(nullptr)},
              {"difference", e.synced && e.synced->classes == e.expected_or_distinct().classes
                                 ? cell_difference(*e.synced, e.expected_or_distinct())
                                 : json(nullptr)},
              {"difference_of", e.expected ? "expected" : "expected_distinct"}};
  if (!e.meta.dataset.empty()) out["dataset"] = e.meta.dataset;
  if (e.meta.task != Task::Classification) out["task"] = to_string(e.meta.task);
  if (!e.provenance.file.empty()) out["run_file"] = e.provenance.file;
  return out;
}

json verdict_summaries_json(const std::vector<Evaluation>& evaluations) {
  if (evaluations.size() == 1) return verdict_summary_json(evaluations.front());
  json list = json::array();
  bool correct = true;
  for (const Evaluation& e : evaluations) {
    list.push_back(verdict_summary_json(e));
    correct = correct && e.diagnosis.correct;
  }
  return {{"epochs", list}, {"correct", correct}};
}

}  // namespace shardlens

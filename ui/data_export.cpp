#include "ui/data_export.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/report.h"

namespace shardlens::ui {

std::string reportJson(const Evaluation& e) {
  ReportView v;
  v.title = e.scenario.title.empty() ? e.scenario.name : e.scenario.title;
  for (int c = 0; c < e.synced.classes; ++c)
    v.class_names.push_back(e.inputs->labels->class_name(c));
  v.class_counts = e.class_counts;
  v.dataset_size = e.plan.n;  // the inputs of a run file carry no labels, the plan its n
  v.world_size = int(e.per_rank.size());
  v.per_rank = &e.per_rank;
  v.synced = &e.synced;
  v.expected = e.expected.classes > 0 ? &e.expected : nullptr;  // unknown for some runs
  v.diagnosis = &e.diagnosis;
  nlohmann::json out = report_json(v);
  if (!e.synced_missing.empty()) {  // zeros stood in for it; say there is none
    out["synced"] = nullptr;
    out["row_sums"]["observed"] = nullptr;
    out["row_sums"]["mismatched"] = nlohmann::json::array();
    out["synced_missing"] = e.synced_missing;
  }
  return out.dump(2) + "\n";
}

std::string matricesCsv(const Evaluation& e) {
  std::ostringstream out;
  out.precision(17);
  out << "matrix,rank,true,predicted,value\n";
  const auto write = [&out](const char* name, int rank, const Matrix& m) {
    for (int t = 0; t < m.classes; ++t)
      for (int p = 0; p < m.classes; ++p) {
        out << name << ',';
        if (rank >= 0) out << rank;
        out << ',' << t << ',' << p << ',' << m.at(t, p) << '\n';
      }
  };
  for (size_t r = 0; r < e.per_rank.size(); ++r) write("rank", int(r), e.per_rank[r]);
  if (e.synced_missing.empty()) write("synced", -1, e.synced);
  if (e.expected.classes > 0) write("expected", -1, e.expected);
  return out.str();
}

}  // namespace shardlens::ui

#include "ui/data_export.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/report/report.h"

namespace shardlens::ui {

std::string reportJson(const Evaluation& e) {
  return report_json(e).dump(2) + "\n";
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
  if (e.synced) write("synced", -1, *e.synced);
  if (e.expected) write("expected", -1, *e.expected);
  return out.str();
}

}  // namespace shardlens::ui

#include "core/report/class_groups.h"

#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/report/confusion_ranking.h"
#include "core/report/report.h"

namespace shardlens {

Matrix collapse_classes(const Matrix& m, const ClassHierarchy& h) {
  Matrix out(h.size());
  if (m.classes != int32_t(h.group_of.size())) return out;
  for (int32_t t = 0; t < m.classes; ++t) {
    const int32_t g = h.group_of[size_t(t)];
    for (int32_t p = 0; p < m.classes; ++p) out.at(g, h.group_of[size_t(p)]) += m.at(t, p);
  }
  return out;
}

std::vector<int64_t> collapse_counts(const std::vector<int64_t>& counts, const ClassHierarchy& h) {
  std::vector<int64_t> out(size_t(h.size()), 0);
  for (size_t c = 0; c < h.group_of.size() && c < counts.size(); ++c)
    out[size_t(h.group_of[c])] += counts[c];
  return out;
}

RowCheck check_group_rows(const Evaluation& e) {
  if (!e.class_groups) return {};
  const ClassHierarchy& h = *e.class_groups;
  return check_rows(collapse_classes(ranked_matrix(e), h), collapse_counts(e.row_check.truth, h));
}

std::string class_groups_text(const Evaluation& e) {
  if (!e.class_groups) return "";
  const ClassHierarchy& h = *e.class_groups;
  const RowCheck groups = check_group_rows(e);
  std::ostringstream out;
  out << "\nGroups (hierarchy): " << h.size() << " groups of " << h.group_of.size() << " classes; "
      << groups.wrong_rows.size() << " groups wrong, " << e.row_check.wrong_rows.size()
      << " classes wrong\n";
  constexpr size_t kShown = 10;
  size_t shown = 0;
  for (int32_t g : groups.by_error) {
    if (!groups.is_wrong(g) || shown == kShown) continue;
    ++shown;
    const size_t r = size_t(g);
    size_t wrong_members = 0;
    for (int32_t c : h.members(g)) wrong_members += e.row_check.is_wrong(c) ? 1 : 0;
    out << "  !! " << std::left << std::setw(24) << h.groups[r] << std::right << std::setw(12)
        << count_text(groups.observed[r]) << std::setw(12) << count_text(double(groups.truth[r]))
        << "   (" << (groups.off[r] > 0 ? "+" : "") << count_text(groups.off[r]) << ")   "
        << wrong_members << " of " << h.members(g).size() << " classes wrong\n";
  }
  if (groups.wrong_rows.size() > shown)
    out << "  ... " << groups.wrong_rows.size() - shown << " more wrong groups\n";
  return out.str();
}

nlohmann::json class_groups_json(const Evaluation& e) {
  if (!e.class_groups) return nullptr;
  const RowCheck groups = check_group_rows(e);
  nlohmann::json observed = nlohmann::json::array();
  for (double v : groups.observed) observed.push_back(count_json(v));
  return {
      {"names", e.class_groups->groups},
      {"group_of", e.class_groups->group_of},
      {"row_sums",
       {{"observed", observed}, {"expected", groups.truth}, {"mismatched", groups.wrong_rows}}}};
}

}  // namespace shardlens

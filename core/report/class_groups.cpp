#include "core/report/class_groups.h"

#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/report/confusion_ranking.h"
#include "core/report/report.h"

namespace shardlens {

namespace {

// Wrong groups the text report lists for one level; the rest are counted.
constexpr size_t kShownPerLevel = 10;

// The index in the level above of each group of `level` (-1 at the top).
std::vector<int32_t> parents_above(const ClassHierarchy& h, int32_t level) {
  const ClassGroups& groups = h.levels[size_t(level)];
  std::vector<int32_t> out(size_t(groups.size()), -1);
  if (level == 0) return out;
  const ClassGroups& above = h.levels[size_t(level - 1)];
  // A group's classes are all in one group above: take its first class's.
  for (size_t c = 0; c < groups.group_of.size(); ++c)
    out[size_t(groups.group_of[c])] = above.group_of[c];
  return out;
}

RowCheck check_level(const Matrix& ranked, const Evaluation& e, const ClassGroups& level) {
  return check_rows(collapse_classes(ranked, level), collapse_counts(e.row_check.truth, level));
}

}  // namespace

Matrix collapse_classes(const Matrix& m, const ClassGroups& level) {
  Matrix out(level.size());
  if (m.classes != int32_t(level.group_of.size())) return out;
  for (int32_t t = 0; t < m.classes; ++t) {
    const int32_t g = level.group_of[size_t(t)];
    for (int32_t p = 0; p < m.classes; ++p) out.at(g, level.group_of[size_t(p)]) += m.at(t, p);
  }
  return out;
}

std::vector<int64_t> collapse_counts(const std::vector<int64_t>& counts, const ClassGroups& level) {
  std::vector<int64_t> out(size_t(level.size()), 0);
  for (size_t c = 0; c < level.group_of.size() && c < counts.size(); ++c)
    out[size_t(level.group_of[c])] += counts[c];
  return out;
}

RowCheck check_group_rows(const Evaluation& e, int32_t level) {
  if (!e.class_groups || level < 0 || level >= e.class_groups->depth()) return {};
  return check_level(ranked_matrix(e), e, e.class_groups->levels[size_t(level)]);
}

std::vector<RowCheck> check_group_levels(const Evaluation& e) {
  if (!e.class_groups) return {};
  const Matrix ranked = ranked_matrix(e);
  std::vector<RowCheck> out;
  for (const ClassGroups& level : e.class_groups->levels)
    out.push_back(check_level(ranked, e, level));
  return out;
}

namespace {

// "1 group", "2 groups"; "1 class", "3 classes".
std::string groups_of(size_t n) {
  return std::to_string(n) + (n == 1 ? " group" : " groups");
}
std::string classes_of(size_t n) {
  return std::to_string(n) + (n == 1 ? " class" : " classes");
}

}  // namespace

std::string class_groups_text(const Evaluation& e) {
  if (!e.class_groups) return "";
  const ClassHierarchy& h = *e.class_groups;
  const std::vector<RowCheck> checks = check_group_levels(e);
  std::ostringstream out;
  for (int32_t l = 0; l < h.depth(); ++l) {
    const ClassGroups& level = h.levels[size_t(l)];
    const RowCheck& groups = checks[size_t(l)];
    out << "\nGroups (hierarchy";
    if (h.depth() > 1) out << ", level " << l + 1 << " of " << h.depth();
    out << "): " << groups_of(level.size()) << " of " << classes_of(level.group_of.size()) << "; "
        << groups_of(groups.wrong_rows.size()) << " wrong, "
        << classes_of(e.row_check.wrong_rows.size()) << " wrong\n";
    size_t shown = 0;
    for (int32_t g : groups.by_error) {
      if (!groups.is_wrong(g) || shown == kShownPerLevel) continue;
      ++shown;
      const size_t r = size_t(g);
      const std::vector<int32_t> members = level.members(g);
      size_t wrong_members = 0;
      for (int32_t c : members) wrong_members += e.row_check.is_wrong(c) ? 1 : 0;
      out << "  !! " << std::left << std::setw(24) << level.groups[r] << std::right << std::setw(12)
          << count_text(groups.observed[r]) << std::setw(12) << count_text(double(groups.truth[r]))
          << "   (" << (groups.off[r] > 0 ? "+" : "") << count_text(groups.off[r]) << ")   "
          << wrong_members << " of " << members.size() << " classes wrong";
      // The group it lies in: its node's parent (a group whose path ended a level up is still
      // in its own parent, not in itself).
      if (const int32_t above = h.nodes[size_t(level.node[r])].parent; above >= 0)
        out << ", in " << h.nodes[size_t(above)].name;
      out << "\n";
    }
    if (groups.wrong_rows.size() > shown)
      out << "  ... " << groups.wrong_rows.size() - shown << " more wrong groups\n";
  }
  return out.str();
}

nlohmann::json class_groups_json(const Evaluation& e) {
  if (!e.class_groups) return nullptr;
  const ClassHierarchy& h = *e.class_groups;
  const std::vector<RowCheck> checks = check_group_levels(e);
  nlohmann::json levels = nlohmann::json::array();
  for (int32_t l = 0; l < h.depth(); ++l) {
    const RowCheck& groups = checks[size_t(l)];
    nlohmann::json observed = nlohmann::json::array();
    for (double v : groups.observed) observed.push_back(count_json(v));
    levels.push_back({{"names", h.levels[size_t(l)].groups},
                      {"parents", parents_above(h, l)},
                      {"group_of", h.levels[size_t(l)].group_of},
                      {"row_sums",
                       {{"observed", observed},
                        {"expected", groups.truth},
                        {"mismatched", groups.wrong_rows}}}});
  }
  nlohmann::json out = {{"depth", h.depth()}};
  for (const char* key : {"names", "group_of", "row_sums"}) out[key] = levels[0][key];
  out["levels"] = std::move(levels);
  return out;
}

}  // namespace shardlens

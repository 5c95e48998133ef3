#include "core/report/compare.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/report/report.h"

namespace shardlens {

Comparison compare_evaluations(const Evaluation& a, const Evaluation& b) {
  Comparison c;
  if (a.classes() != b.classes()) {
    c.comparable = false;
    c.why = std::to_string(a.classes()) + " classes against " + std::to_string(b.classes());
    return c;
  }
  c.same_world_size = a.per_rank.size() == b.per_rank.size();
  for (size_t r = 0; c.same_world_size && r < a.per_rank.size(); ++r)
    if (a.per_rank[r].cells != b.per_rank[r].cells) c.ranks_differing.push_back(int(r));
  if (!a.synced || !b.synced) {
    c.why = std::string(!a.synced ? "A" : "B") + " has no reported matrix (" +
            (!a.synced ? a.synced_missing : b.synced_missing) + ")";
    return c;
  }
  c.difference = *b.synced;
  for (size_t i = 0; i < c.difference.cells.size(); ++i) {
    c.difference.cells[i] -= a.synced->cells[i];
    c.cells_differing += c.difference.cells[i] != 0;
  }
  const auto ra = a.synced->row_sums(), rb = b.synced->row_sums();
  for (size_t r = 0; r < ra.size(); ++r)
    if (ra[r] != rb[r]) c.rows.push_back(static_cast<int32_t>(r));
  c.equal = c.cells_differing == 0;
  return c;
}

nlohmann::json comparison_json(const Evaluation& a, const Evaluation& b, const Comparison& c,
                               const std::string& a_name, const std::string& b_name) {
  nlohmann::json rows = nlohmann::json::array();
  if (a.synced && b.synced) {
    const auto ra = a.synced->row_sums(), rb = b.synced->row_sums();
    for (int32_t r : c.rows)
      rows.push_back({{"class", r},
                      {"name", a.class_name(r)},
                      {"a", ra[size_t(r)]},
                      {"b", rb[size_t(r)]},
                      {"true_count", a.meta.class_counts[size_t(r)]}});
  }
  return {{"a", {{"name", a_name}, {"report", report_json(a)}}},
          {"b", {{"name", b_name}, {"report", report_json(b)}}},
          {"equal", c.equal},
          {"comparable", c.comparable},
          {"why", c.why},
          {"cells_differing", c.cells_differing},
          {"difference", c.difference.classes > 0 ? matrix_json(c.difference) : nullptr},
          {"rows_differing", rows},
          {"same_world_size", c.same_world_size},
          {"ranks_differing", c.ranks_differing}};
}

std::string comparison_text(const Evaluation& a, const Evaluation& b, const Comparison& c,
                            const std::string& a_name, const std::string& b_name) {
  std::ostringstream out;
  out << "A: " << a_name << " — " << report_title(a) << " (epoch " << a.epoch() << ")\n"
      << "B: " << b_name << " — " << report_title(b) << " (epoch " << b.epoch() << ")\n\n";
  if (!c.comparable || !a.synced || !b.synced) {
    out << "Not comparable: " << c.why << ".\n";
  } else if (c.equal) {
    out << "The reported matrices are equal.\n";
  } else {
    out << "The reported matrices differ in " << c.cells_differing << " cell(s) and "
        << c.rows.size() << " row sum(s):\n";
    const auto ra = a.synced->row_sums(), rb = b.synced->row_sums();
    for (int32_t r : c.rows) {
      const double d = rb[size_t(r)] - ra[size_t(r)];
      out << "  " << a.class_name(r) << ": A " << ra[size_t(r)] << ", B " << rb[size_t(r)] << " ("
          << (d > 0 ? "+" : "") << d << "), true count " << a.meta.class_counts[size_t(r)] << "\n";
    }
  }
  for (const auto& [name, e] : {std::pair<const char*, const Evaluation*>{"A", &a}, {"B", &b}}) {
    out << "\n" << name << ": " << (e->diagnosis.correct ? "correct" : "WRONG");
    for (const Finding& f : e->diagnosis.findings) out << " [" << pattern_id(f.pattern) << "]";
    out << "\n";
  }
  return out.str();
}

}  // namespace shardlens

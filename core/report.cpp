#include "core/report.h"

#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace shardlens {

using nlohmann::json;

namespace {

json number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) {
    return static_cast<int64_t>(v);
  }
  if (!std::isfinite(v)) return v > 0 ? "inf" : "nan";
  return v;
}

std::string fmt(double v) {
  std::ostringstream s;
  if (v == std::floor(v) && std::abs(v) < 1e15)
    s << static_cast<int64_t>(v);
  else
    s << std::setprecision(4) << v;
  return s.str();
}

void print_matrix(std::ostringstream& out, const std::string& title, const Matrix& m) {
  out << title << "\n";
  size_t width = 3;
  for (double v : m.cells) width = std::max(width, fmt(v).size());
  for (int32_t r = 0; r < m.classes; ++r) {
    out << "  ";
    for (int32_t c = 0; c < m.classes; ++c)
      out << std::setw(static_cast<int>(width) + 1) << fmt(m.at(r, c));
    out << "\n";
  }
}

}  // namespace

json matrix_json(const Matrix& m) {
  json rows = json::array();
  for (int32_t r = 0; r < m.classes; ++r) {
    json row = json::array();
    for (int32_t c = 0; c < m.classes; ++c) row.push_back(number(m.at(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

json finding_json(const Finding& f) {
  json fixes = json::array();
  for (const Fix& x : f.fixes) fixes.push_back({{"framework", x.framework}, {"text", x.text}});
  return {{"pattern", f.pattern},          {"title", f.title},
          {"explanation", f.explanation},  {"fixes", fixes},
          {"classes", f.classes},          {"samples", f.samples},
          {"sample_count", f.sample_count}};
}

json report_json(const ReportView& v) {
  json per_rank = json::array();
  for (const Matrix& m : *v.per_rank) per_rank.push_back(matrix_json(m));
  json observed = json::array();
  json mismatched = json::array();
  const auto rows = v.synced->row_sums();
  for (size_t r = 0; r < rows.size(); ++r) {
    observed.push_back(number(rows[r]));
    if (std::abs(rows[r] - static_cast<double>(v.class_counts[r])) > 1e-9) {
      mismatched.push_back(static_cast<int64_t>(r));
    }
  }
  json findings = json::array();
  if (v.diagnosis) {
    for (const Finding& f : v.diagnosis->findings) findings.push_back(finding_json(f));
  }
  json out = {{"classes", v.synced->classes},
              {"class_names", v.class_names},
              {"class_counts", v.class_counts},
              {"n", v.dataset_size},
              {"world_size", v.world_size},
              {"per_rank", per_rank},
              {"synced", matrix_json(*v.synced)},
              {"expected", v.expected ? matrix_json(*v.expected) : json(nullptr)},
              {"row_sums",
               {{"observed", observed}, {"expected", v.class_counts}, {"mismatched", mismatched}}},
              {"correct", v.diagnosis ? v.diagnosis->correct : true},
              {"diagnosis", findings}};
  if (v.diagnosis) {
    const Diagnosis& d = *v.diagnosis;
    out["summary"] = {
        {"reported_total", number(d.reported_total)}, {"expected_total", d.expected_total},
        {"evaluated_records", d.evaluated_records},   {"distinct_evaluated", d.distinct_evaluated},
        {"duplicated_samples", d.duplicated_samples}, {"missing_samples", d.missing_samples}};
  }
  return out;
}

std::string report_text(const ReportView& v) {
  std::ostringstream out;
  const Diagnosis* d = v.diagnosis;
  out << v.title << "\n" << std::string(v.title.size(), '=') << "\n";
  out << "dataset: " << v.dataset_size << " samples, " << v.synced->classes << " classes; "
      << v.world_size << " ranks\n";
  if (d) {
    out << "reported total " << fmt(d->reported_total) << " vs " << d->expected_total
        << " samples; " << d->evaluated_records << " records, " << d->distinct_evaluated
        << " distinct, " << d->duplicated_samples << " duplicated, " << d->missing_samples
        << " never evaluated\n";
  }
  out << "\nRow sums (observed vs expected)\n";
  const auto rows = v.synced->row_sums();
  const size_t shown = std::min<size_t>(rows.size(), 50);
  for (size_t r = 0; r < shown; ++r) {
    const double want = static_cast<double>(v.class_counts[r]);
    const bool bad = std::abs(rows[r] - want) > 1e-9;
    out << "  " << (bad ? "!! " : "   ") << std::left << std::setw(14)
        << (r < v.class_names.size() ? v.class_names[r] : std::to_string(r)) << std::right
        << std::setw(12) << fmt(rows[r]) << std::setw(12) << fmt(want);
    if (bad) out << "   (" << (rows[r] > want ? "+" : "") << fmt(rows[r] - want) << ")";
    out << "\n";
  }
  if (shown < rows.size()) out << "  ... " << rows.size() - shown << " more classes\n";
  if (v.synced->classes <= 12) {
    out << "\n";
    print_matrix(out, "Synced (reported) matrix, rows = true class:", *v.synced);
    if (v.expected) print_matrix(out, "Expected matrix (one process, whole dataset):", *v.expected);
  }
  out << "\n";
  if (!d || d->correct) {
    out << "Verdict: the reported matrix equals the expected one.\n";
    return out.str();
  }
  out << "Verdict: the reported matrix is WRONG (" << d->mismatched_rows.size()
      << " row(s) differ from the class counts).\n";
  for (const Finding& f : d->findings) {
    out << "\n* " << f.title << " [" << f.pattern << "]\n  " << f.explanation << "\n";
    if (!f.classes.empty()) {
      out << "  classes:";
      for (int32_t c : f.classes) {
        out << " "
            << (static_cast<size_t>(c) < v.class_names.size() ? v.class_names[c]
                                                              : std::to_string(c));
      }
      out << "\n";
    }
    if (!f.samples.empty()) {
      out << "  samples (" << f.sample_count << "):";
      for (size_t i = 0; i < std::min<size_t>(f.samples.size(), 12); ++i)
        out << " " << f.samples[i];
      if (f.sample_count > 12) out << " ...";
      out << "\n";
    }
    for (const Fix& x : f.fixes) out << "  fix (" << x.framework << "): " << x.text << "\n";
  }
  return out.str();
}

}  // namespace shardlens

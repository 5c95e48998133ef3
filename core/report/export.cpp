#include "core/report/export.h"
#include "core/io/output_text.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/evaluation/caption.h"
#include "core/io/csv.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/report/metrics.h"
#include "core/report/task_metrics.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

std::string cell_text(double v) {
  std::ostringstream s;
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15)
    s << static_cast<int64_t>(v);
  else
    s.precision(10), s << v;
  return s.str();
}

std::string name_of(const std::vector<std::string>& names, int32_t c) {
  return static_cast<size_t>(c) < names.size() ? names[c] : std::to_string(c);
}

std::string npy_of(const Matrix& m) {
  const std::vector<int64_t> shape = {m.classes, m.classes};
  bool integral = true;
  for (double v : m.cells) integral = integral && std::isfinite(v) && v == std::floor(v);
  if (!integral) return npy_bytes(m.cells, shape);
  std::vector<int64_t> ints(m.cells.begin(), m.cells.end());
  return npy_bytes(ints, shape);
}

}  // namespace

std::string matrix_csv(const Matrix& m, const std::vector<std::string>& names) {
  std::ostringstream out;
  out << "true\\pred";
  for (int32_t c = 0; c < m.classes; ++c) out << "," << csv_field(name_of(names, c));
  out << "\n";
  for (int32_t r = 0; r < m.classes; ++r) {
    out << csv_field(name_of(names, r));
    for (int32_t c = 0; c < m.classes; ++c) out << "," << cell_text(m.at(r, c));
    out << "\n";
  }
  return out.str();
}

std::string matrix_latex(const Matrix& m, const std::vector<std::string>& names,
                         const std::string& caption) {
  std::ostringstream out;
  out << "\\begin{table}[ht]\n\\centering\n\\begin{tabular}{l" << std::string(m.classes, 'r')
      << "}\n\\hline\ntrue $\\backslash$ pred";
  for (int32_t c = 0; c < m.classes; ++c) out << " & " << latex_text(name_of(names, c));
  out << " \\\\\n\\hline\n";
  for (int32_t r = 0; r < m.classes; ++r) {
    out << latex_text(name_of(names, r));
    for (int32_t c = 0; c < m.classes; ++c) out << " & " << cell_text(m.at(r, c));
    out << " \\\\\n";
  }
  out << "\\hline\n\\end{tabular}\n\\caption{" << latex_text(caption) << "}\n\\end{table}\n";
  return out.str();
}

std::vector<std::pair<std::string, Matrix>> exported_matrices(const Evaluation& e) {
  std::vector<std::pair<std::string, Matrix>> out;
  for (size_t r = 0; r < e.per_rank.size(); ++r)
    out.emplace_back("per_rank_" + std::to_string(r), e.per_rank[r]);
  if (e.synced) out.emplace_back("synced", *e.synced);
  if (e.expected) out.emplace_back("expected", *e.expected);
  out.emplace_back("expected_distinct", e.expected_distinct);
  if (auto d = e.difference()) out.emplace_back("difference", std::move(*d));
  return out;
}

std::string matrices_csv(const Evaluation& e) {
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

std::vector<std::string> export_data(const Evaluation& e, const std::string& dir,
                                     const std::vector<std::string>& formats) {
  for (const std::string& format : formats) {
    if (format != "csv" && format != "npy" && format != "latex" && format != "json")
      throw InputError("--formats: '" + format + "' is not csv, json, latex or npy");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir + ": cannot create output directory (" + ec.message() + ")");
  const auto matrices = exported_matrices(e);
  std::vector<std::string> written;
  AtomicFileSet files;  // all or none, with one sync for every rank's files
  auto write = [&](const std::string& name, const std::string& bytes) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    files.add(path, bytes);
    written.push_back(path);
  };
  for (const std::string& format : formats) {
    for (const auto& [name, m] : matrices) {
      if (format == "csv")
        write(name + ".csv", matrix_csv(m, e.meta.class_names));
      else if (format == "npy")
        write(name + ".npy", npy_of(m));
      else if (format == "latex")
        write(name + ".tex", matrix_latex(m, e.meta.class_names, figure_caption(e, name)));
      else
        write(name + ".json", json_text(matrix_json(m)) + "\n");
    }
  }
  if (std::find(formats.begin(), formats.end(), "csv") != formats.end())
    write("matrices.csv", matrices_csv(e));
  if (e.expected || e.synced) {
    write("metrics.csv", metrics_csv(e));
    write("metrics.json", json_text(evaluation_metrics_json(e), 2) + "\n");
  }
  // A segmentation, token or multilabel evaluation's own metrics (mIoU, token accuracy, per
  // label F1: reported, true, per-rank mean), beside the classification ones above.
  if (const TaskMetrics task = task_metrics(e); !task.empty())
    write("task_metrics.json", json_text(task_metrics_json(task), 2) + "\n");
  write("report.json", json_text(report_json(e), 2) + "\n");
  files.commit();
  return written;
}

bool export_writes(const std::string& file_name) {
  const std::filesystem::path name(file_name);
  const std::string stem = name.stem().string(), ext = name.extension().string();
  static const std::set<std::string> kExtensions = {".csv", ".json", ".tex", ".npy",
                                                    ".png", ".svg",  ".pdf"};
  static const std::set<std::string> kStems = {
      "synced",  "expected", "expected_distinct", "difference", "matrices",
      "metrics", "report",   "per-rank",          "drift",      "task_metrics"};
  if (!kExtensions.count(ext)) return false;
  if (kStems.count(stem)) return true;
  const std::string rank = "per_rank_";
  return stem.size() > rank.size() && stem.compare(0, rank.size(), rank) == 0 &&
         std::all_of(stem.begin() + long(rank.size()), stem.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace shardlens

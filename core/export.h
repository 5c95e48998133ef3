#pragma once
// Data exports of a report: matrices as CSV, LaTeX and .npy, the whole report as JSON.
#include <string>
#include <vector>

#include "core/matrix.h"
#include "core/report.h"

namespace shardlens {

std::string matrix_csv(const Matrix& m, const std::vector<std::string>& class_names);
std::string matrix_latex(const Matrix& m, const std::vector<std::string>& class_names,
                         const std::string& caption);

// Writes per_rank_<r>, synced, expected (when known) in each of `formats` (csv, json,
// latex, npy) plus report.json into `dir` (created). Returns the paths written.
std::vector<std::string> export_data(const ReportView& view, const std::string& dir,
                                     const std::vector<std::string>& formats);

}  // namespace shardlens

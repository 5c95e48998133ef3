#pragma once
// Data exports of a report: matrices as CSV, LaTeX and .npy, the whole report as JSON.
#include <string>
#include <utility>
#include <vector>

#include "core/evaluation/evaluation.h"
#include "core/report/report.h"
#include "core/vocabulary/matrix.h"

namespace shardlens {

std::string matrix_csv(const Matrix& m, const std::vector<std::string>& class_names);
std::string matrix_latex(const Matrix& m, const std::vector<std::string>& class_names,
                         const std::string& caption);

// The matrices an export writes, by file stem: per_rank_<r>, synced (when reported),
// expected (when known), expected_distinct and difference (when both synced and expected are).
std::vector<std::pair<std::string, Matrix>> exported_matrices(const Evaluation& e);

// Every matrix of the evaluation in one long-format CSV (matrix, rank, true, predicted, value;
// rank empty for synced and expected) that pandas or R read directly: matrices.csv of a csv
// export, and the GUI's Export data.
std::string matrices_csv(const Evaluation& e);

// Writes the exported matrices in each of `formats` (csv, json, latex, npy; csv adds
// matrices.csv, every matrix in long format) plus report.json
// and the metrics of the reported and expected matrices (metrics.csv, metrics.json; for a
// segmentation, token or multilabel evaluation also task_metrics.json) into `dir`
// (created). Returns the paths written.
std::vector<std::string> export_data(const Evaluation& e, const std::string& dir,
                                     const std::vector<std::string>& formats);

// Whether an export into a directory (export_data, and the figures of ui/render: per-rank,
// synced, expected, difference, drift .png/.svg/.pdf) may write a file of this name, so the
// command can refuse up front an --out folder that holds one of its inputs under such a name
// (require_output, core/io/files.h).
bool export_writes(const std::string& file_name);

}  // namespace shardlens

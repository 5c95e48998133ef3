#pragma once
// Data exports of an evaluation: the JSON report (the CLI's format) and the matrices as a
// long-format CSV (matrix, rank, true, predicted, value) that pandas or R read directly.
#include <string>

#include <QString>

#include "core/sim/engine.h"
#include "ui/render/heatmap_data.h"

namespace shardlens::ui {

std::string reportJson(const Evaluation& e);
std::string matricesCsv(const Evaluation& e);
// One heatmap as a spreadsheet pastes it: a header row of predicted class names, then one
// row per true class (its name, then its values), tab-separated, in display order. Counts
// print as integers, fractions with full precision.
QString heatmapTsv(const render::HeatmapData& d);

}  // namespace shardlens::ui

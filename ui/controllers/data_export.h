#pragma once
// Data exports of an evaluation that need Qt: the JSON report (the CLI's format) and a
// heatmap as tab-separated text. The long-format CSV of every matrix is core's
// (matrices_csv, core/report/export.h), written by `shardlens-cli export` too.
#include <string>

#include <QString>

#include "core/sim/engine.h"
#include "ui/render/heatmap_data.h"

namespace shardlens::ui {

std::string reportJson(const Evaluation& e);
// One heatmap as a spreadsheet pastes it: a header row of predicted class names, then one
// row per true class (its name, then its values), tab-separated, in display order. Counts
// print as integers, fractions with full precision.
QString heatmapTsv(const render::HeatmapData& d);

}  // namespace shardlens::ui

#pragma once
// Data exports of an evaluation: the JSON report (the CLI's format) and the matrices as a
// long-format CSV (matrix, rank, true, predicted, value) that pandas or R read directly.
#include <string>

#include "core/sim/engine.h"

namespace shardlens::ui {

std::string reportJson(const Evaluation& e);
std::string matricesCsv(const Evaluation& e);

}  // namespace shardlens::ui

#pragma once
// Figures for `simulate --figures` / `export`: painted by ui/render when the build has Qt.
#include <string>
#include <vector>

#include "core/sim/engine.h"

namespace shardlens::cli {

// Returns the paths written; throws InputError when this build has no figure renderer.
std::vector<std::string> write_figures(const Evaluation& e, const std::string& dir,
                                       const std::vector<std::string>& formats, int dpi);

}  // namespace shardlens::cli

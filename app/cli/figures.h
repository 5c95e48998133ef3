#pragma once
// Figures for `simulate --figures` / `export`: painted by ui/render when the build has Qt.
#include <string>
#include <vector>

#include "core/sim/engine.h"

namespace shardlens::cli {

struct FigureFlags {
  std::vector<int> ranks;  // --ranks: the per-rank figure's ranks; empty: all
  // --vmax / --vmax-difference: fixed colour ranges; <= 0: from the data.
  double vmax = 0;
  double vmax_expected = 0;  // the expected figure's (--vmax, or shared across epochs)
  double vmax_difference = 0;
  double vmax_ranks = 0;  // the per-rank panels' range (--vmax, or shared across epochs)
  // --shared-range: synced and expected on one range, the larger (default: each its own).
  bool shared_range = false;
  bool over_epochs = false;  // the fixed ranges are the largest of the run's epochs
  // --colour-scale auto|linear|log (--log-scale: log); auto is log for pixel and token counts
  std::string colour_scale = "auto";
  // --class-order: the figures' class order (index, name, count, error, confusion), as the
  // GUI's Class order
  std::string class_order = "index";
};

// Returns the paths written; throws InputError when this build has no figure renderer or a
// flag does not fit the evaluation (a rank it does not have).
std::vector<std::string> write_figures(const Evaluation& e, const std::string& dir,
                                       const std::vector<std::string>& formats, int dpi,
                                       const FigureFlags& flags = {});

// The drift figure of a run's evaluations (drift.png / .svg / .pdf in dir): each class's row
// sum minus its true count, evaluation by evaluation. Throws like write_figures.
std::vector<std::string> write_drift_figure(const std::vector<Evaluation>& evaluations,
                                            const std::string& dir,
                                            const std::vector<std::string>& formats, int dpi);

}  // namespace shardlens::cli

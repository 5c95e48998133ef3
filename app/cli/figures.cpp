#include "app/cli/figures.h"

#include "core/vocabulary/types.h"
#ifdef SHARDLENS_CLI_FIGURES
#include "ui/render/figures.h"
#endif

namespace shardlens::cli {

std::vector<std::string> write_figures(const Evaluation& e, const std::string& dir,
                                       const std::vector<std::string>& formats, int dpi,
                                       const FigureFlags& flags) {
  for (int r : flags.ranks) {
    if (r < 0 || r >= e.meta.world_size) {
      throw InputError("--ranks: rank " + std::to_string(r) + " is not in 0.." +
                       std::to_string(e.meta.world_size - 1));
    }
  }
#ifdef SHARDLENS_CLI_FIGURES
  render::FigureSetOptions set;
  set.ranks = flags.ranks;
  set.vmax = flags.vmax;
  set.vmaxExpected = flags.vmax_expected;
  set.sharedRange = flags.shared_range;
  set.rangesOverEpochs = flags.over_epochs;
  set.vmaxDifference = flags.vmax_difference;
  set.vmaxRanks = flags.vmax_ranks;
  std::vector<std::string> written;
  if (render::write_figure_set(e, dir, formats, dpi, &written, set, flags.colour_scale,
                               flags.class_order) != 0) {
    throw InputError(dir + ": could not write the figures");
  }
  return written;
#else
  (void)e, (void)dir, (void)formats, (void)dpi;
  throw InputError("--figures: this build has no figure renderer (built without Qt 6)");
#endif
}

std::vector<std::string> write_drift_figure(const std::vector<Evaluation>& evaluations,
                                            const std::string& dir,
                                            const std::vector<std::string>& formats, int dpi) {
#ifdef SHARDLENS_CLI_FIGURES
  std::vector<const Evaluation*> all;
  for (const Evaluation& e : evaluations) all.push_back(&e);
  std::vector<std::string> written;
  if (render::write_drift_figure(all, dir, formats, dpi, &written) != 0)
    throw InputError(dir + ": could not write the drift figure");
  return written;
#else
  (void)evaluations, (void)dir, (void)formats, (void)dpi;
  throw InputError("--figures: this build has no figure renderer (built without Qt 6)");
#endif
}

}  // namespace shardlens::cli

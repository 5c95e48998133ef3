#include "app/cli/figures.h"

#include "core/model/types.h"
#ifdef SHARDLENS_CLI_FIGURES
#include "ui/render/figures.h"
#endif

namespace shardlens::cli {

std::vector<std::string> write_figures(const Evaluation& e, const std::string& dir,
                                       const std::vector<std::string>& formats, int dpi) {
#ifdef SHARDLENS_CLI_FIGURES
  std::vector<std::string> written;
  if (render::write_figure_set(e, dir, formats, dpi, &written) != 0) {
    throw InputError(dir + ": could not write the figures");
  }
  return written;
#else
  (void)e, (void)dir, (void)formats, (void)dpi;
  throw InputError("--figures: this build has no figure renderer (built without Qt 6)");
#endif
}

}  // namespace shardlens::cli

// `export`: data (CSV, JSON, LaTeX, .npy) and figures of a simulation or a run file.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "app/cli/figures.h"
#include "core/io/files.h"
#include "core/io/staged_directory.h"
#include "core/report/export.h"

namespace shardlens::cli {

namespace {

struct ExportArgs {
  EngineFlags engine;
  std::string run_file;
  std::string out;
  std::vector<std::string> formats = {"csv", "json"};
  int dpi = 150;
  FigureFlags figure;
};

double max_abs(const Matrix& m) {
  double top = 0;
  for (double v : m.cells) top = std::max(top, std::abs(v));
  return top;
}

// Figures of several epochs: each view's colour range is its largest over the epochs
// (synced, expected, difference, ranks), so a colour means the same count in every epoch
// while a batch-limited synced matrix keeps its own range; --shared-range puts synced and
// expected on one; --vmax / --vmax-difference override them.
FigureFlags shared_range(const std::vector<Evaluation>& all, FigureFlags flags) {
  if (all.size() < 2) return flags;
  double synced = 0, expected = 0, difference = 0, ranks = 0;
  for (const Evaluation& e : all) {
    if (e.synced) synced = std::max(synced, max_abs(*e.synced));
    if (e.expected) expected = std::max(expected, max_abs(*e.expected));
    if (auto d = e.difference()) difference = std::max(difference, max_abs(*d));
    for (const Matrix& m : e.per_rank) ranks = std::max(ranks, max_abs(m));
  }
  if (flags.shared_range) synced = expected = std::max(synced, expected);
  if (flags.vmax <= 0) {
    flags.vmax = synced;
    flags.vmax_expected = expected;
    flags.vmax_ranks = ranks;
    flags.over_epochs = true;
  }
  if (flags.vmax_difference <= 0) flags.vmax_difference = difference;
  return flags;
}

// What the figures do not read, released once the data formats are written: the per-sample
// arrays (release_samples) and the distinct-samples matrix, about 16 MB at 1000 classes, 64
// ranks and 10^6 samples, which the figures' own buffers then reuse.
void release_for_figures(Evaluation& e) {
  release_samples(e);
  e.expected_distinct = Matrix();
}

// Figures allocate and free buffers of 8 to 17 MB (a panel's cells, a PNG page) beside the
// half GB of matrices they paint. glibc's adaptive threshold then serves such buffers from
// the heap and keeps up to twice the largest freed one resident (measured: 10 MB more peak
// at 1000 classes x 64 ranks); fixed thresholds hand them back to the system when freed.
void return_freed_buffers() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
}

std::vector<std::string> split_figures(std::vector<std::string>& formats) {
  std::vector<std::string> figures;
  std::erase_if(formats, [&](const std::string& f) {
    const bool figure = f == "png" || f == "svg" || f == "pdf";
    if (figure) figures.push_back(f);
    return figure;
  });
  return figures;
}

}  // namespace

void register_export(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd =
      app.add_subcommand("export", "Export matrices and figures of a scenario or run file");
  add_engine_flags(*cmd, args->engine);
  cmd->add_option("--run", args->run_file, "A run file (.slrun) to export instead of simulating");
  cmd->add_option("--out", args->out, "Output directory")->required();
  cmd->add_option("--formats", args->formats,
                  "csv,json,latex,npy,png,svg,pdf (csv: one file per matrix, plus "
                  "matrices.csv with every matrix in long format: "
                  "matrix,rank,true,predicted,value)")
      ->delimiter(',')
      ->check(CLI::IsMember({"csv", "json", "latex", "npy", "png", "svg", "pdf"}))
      ->capture_default_str();
  cmd->add_option("--dpi", args->dpi, "PNG resolution")->capture_default_str();
  cmd->add_option("--ranks", args->figure.ranks, "Ranks of the per-rank figure (e.g. 0,1,5)")
      ->delimiter(',');
  cmd->add_option("--vmax", args->figure.vmax,
                  "Fixed colour range [0, V] of the matrix figures, to compare figures")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--vmax-difference", args->figure.vmax_difference,
                  "Fixed colour range [-V, V] of the difference figure")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--shared-range", args->figure.shared_range,
                "Draw the synced and expected figures on one colour range, the larger of "
                "theirs (default: each figure its own range, as the GUI's views)");
  CLI::Option* scale =
      cmd->add_option(
             "--colour-scale", args->figure.colour_scale,
             "Colour scale of the matrix figures, as the GUI's Scale: auto (log for pixel "
             "and token counts, which span orders of magnitude; linear otherwise), linear, "
             "log; the colour bars say a log scale")
          ->check(CLI::IsMember({"auto", "linear", "log"}))
          ->capture_default_str();
  cmd->add_flag_callback(
         "--log-scale", [args] { args->figure.colour_scale = "log"; },
         "Colours on a log scale (--colour-scale log), so the small counts of a sparse matrix "
         "(1000 classes) show beside its large ones")
      ->excludes(scale);
  cmd->add_option("--class-order", args->figure.class_order,
                  "Class order of the figures, as the GUI's: index, name, count (most frequent "
                  "first), error (wrong rows first), confusion (most confused pairs first)")
      ->check(CLI::IsMember({"index", "name", "count", "error", "confusion"}))
      ->capture_default_str();
  cmd->callback([cmd, args] {
    require_output(args->out, OutputKind::Directory,
                   engine_inputs(*cmd, args->engine, args->run_file), export_writes);
    std::vector<std::string> data = args->formats;
    const std::vector<std::string> figures = split_figures(data);
    // A run of several epochs: one folder per epoch (epoch<e>/), unless --epoch picks one.
    std::vector<Evaluation> all = evaluations_for(*cmd, args->engine, args->run_file);
    FigureFlags figure = args->figure;
    if (figure.vmax > 0) figure.vmax_ranks = figure.vmax_expected = figure.vmax;
    figure = shared_range(all, figure);
    // Every file of every format is written into a staging directory and put in place only
    // when all are complete: a failure or a kill leaves the previous export whole.
    StagedDirectory stage(args->out);
    std::vector<std::string> written;
    stage.write_and_commit([&] {
      for (Evaluation& e : all) {
        const std::string dir = epoch_dir(stage.path(), e, all.size());
        // Figures alone write only figures: report.json comes with the data formats (it is
        // hundreds of MB at 1000 classes and 64 ranks).
        if (!data.empty()) {
          const auto files = export_data(e, dir, data);
          written.insert(written.end(), files.begin(), files.end());
        }
        if (!figures.empty()) {
          release_for_figures(e);
          return_freed_buffers();
          const auto more = write_figures(e, dir, figures, args->dpi, figure);
          written.insert(written.end(), more.begin(), more.end());
        }
      }
      // A run of several evaluations: how each class's row strays, epoch by epoch.
      if (!figures.empty() && all.size() > 1) {
        const auto more = write_drift_figure(all, stage.path(), figures, args->dpi);
        written.insert(written.end(), more.begin(), more.end());
      }
    });
    for (const std::string& path : written) std::cout << stage.final_path(path) << "\n";
  });
}

}  // namespace shardlens::cli

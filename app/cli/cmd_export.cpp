// `export`: data (CSV, JSON, LaTeX, .npy) and figures of a simulation or a run file.
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "app/cli/figures.h"
#include "core/report/export.h"

namespace shardlens::cli {

namespace {

struct ExportArgs {
  EngineFlags engine;
  std::string run_file;
  std::string out;
  std::vector<std::string> formats = {"csv", "json"};
  int dpi = 150;
};

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
  cmd->add_option("--formats", args->formats, "csv,json,latex,npy,png,svg,pdf")
      ->delimiter(',')
      ->check(CLI::IsMember({"csv", "json", "latex", "npy", "png", "svg", "pdf"}))
      ->capture_default_str();
  cmd->add_option("--dpi", args->dpi, "PNG resolution")->capture_default_str();
  cmd->callback([cmd, args] {
    std::vector<std::string> data = args->formats;
    const std::vector<std::string> figures = split_figures(data);
    // A run of several epochs: one folder per epoch (epoch<e>/), unless --epoch picks one.
    const std::vector<Evaluation> all = evaluations_for(*cmd, args->engine, args->run_file);
    std::vector<std::string> written;
    for (const Evaluation& e : all) {
      const std::string dir = epoch_dir(args->out, e, all.size());
      const auto files = export_data(e, dir, data);
      written.insert(written.end(), files.begin(), files.end());
      if (!figures.empty()) {
        const auto more = write_figures(e, dir, figures, args->dpi);
        written.insert(written.end(), more.begin(), more.end());
      }
    }
    for (const std::string& path : written) std::cout << path << "\n";
  });
}

}  // namespace shardlens::cli

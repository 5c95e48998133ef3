// `simulate` (report, JSON, --out files, --figures) and `diagnose` (exit code for pipelines).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "app/cli/figures.h"
#include "core/report/export.h"
#include "core/report/report.h"
#include "core/sim/engine.h"

namespace shardlens::cli {

namespace {

struct SimulateArgs {
  EngineFlags engine;
  std::string out;
  std::vector<std::string> figures;
  int dpi = 150;
  std::string run_file;
};

void print_report(const Evaluation& e, const std::string& format) {
  if (format == "json")
    std::cout << report_json(e).dump(2) << "\n";
  else
    std::cout << report_text(e);
}

void write_outputs(const Evaluation& e, const SimulateArgs& a) {
  if (a.out.empty()) return;
  auto written = export_data(e, a.out, {"csv", "json", "npy"});
  if (!a.figures.empty()) {
    auto figures = write_figures(e, a.out, a.figures, a.dpi);
    written.insert(written.end(), figures.begin(), figures.end());
  }
  std::cerr << "wrote " << written.size() << " files to " << a.out << "\n";
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand("simulate", "Simulate a multi-rank evaluation and report it");
  add_engine_flags(*cmd, args->engine);
  cmd->add_option("--out", args->out, "Directory for matrices (CSV, JSON, .npy) and figures");
  cmd->add_option("--figures", args->figures, "Figure formats to write with --out: png,svg,pdf")
      ->delimiter(',')
      ->check(CLI::IsMember({"png", "svg", "pdf"}));
  cmd->add_option("--dpi", args->dpi, "PNG resolution")->capture_default_str();
  cmd->add_option("--run", args->run_file, "A run file (.slrun) to report instead of simulating");
  cmd->callback([cmd, args] {
    const Evaluation e = evaluation_for(*cmd, args->engine, args->run_file);
    print_report(e, args->engine.format);
    write_outputs(e, *args);
  });
}

void register_diagnose(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose", "Check a simulated scenario or a run file; exit 1 when the matrix is wrong");
  add_engine_flags(*cmd, args->engine);
  cmd->add_option("--run", args->run_file, "A run file (.slrun) to diagnose instead of simulating");
  cmd->callback([cmd, args] {
    // A run file and a simulation are reported alike; an incomplete run is wrong (exit 1)
    // with its "incomplete-run" finding, as the GUI shows it.
    const Evaluation e = evaluation_for(*cmd, args->engine, args->run_file);
    print_report(e, args->engine.format);
    g_exit_code = e.diagnosis.correct ? 0 : 1;
  });
}

}  // namespace shardlens::cli

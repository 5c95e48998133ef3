// `simulate` (report, JSON, --out files, --figures) and `diagnose` (exit code for pipelines).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "app/cli/figures.h"
#include "app/cli/terminal_progress.h"
#include "core/engine.h"
#include "core/export.h"
#include "core/runfile.h"

namespace shardlens::cli {

namespace {

struct SimulateArgs {
  EngineFlags engine;
  std::string out;
  std::vector<std::string> figures;
  int dpi = 150;
  std::string run_file;
};

void print_report(const ReportView& view, const std::string& format) {
  if (format == "json")
    std::cout << report_json(view).dump(2) << "\n";
  else
    std::cout << report_text(view);
}

void write_outputs(const Evaluation& e, const ReportView& view, const SimulateArgs& a) {
  if (a.out.empty()) return;
  auto written = export_data(view, a.out, {"csv", "json", "npy"});
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
  cmd->callback([cmd, args] {
    const Scenario s = resolve_scenario(*cmd, args->engine);
    TerminalProgress progress;
    const Evaluation e = simulate(s, &progress);
    progress.finish();
    const ReportView view = report_view(e);
    print_report(view, args->engine.format);
    write_outputs(e, view, *args);
  });
}

void register_diagnose(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose", "Check a simulated scenario or a run file; exit 1 when the matrix is wrong");
  add_engine_flags(*cmd, args->engine);
  cmd->add_option("--run", args->run_file, "A run file (.slrun) to diagnose instead of simulating");
  cmd->callback([cmd, args] {
    if (!args->run_file.empty()) {
      const RunFile run = load_run_file(args->run_file);
      const Diagnosis d = diagnose_run(run, args->run_file);
      print_report(run_report_view(run, d), args->engine.format);
      g_exit_code = d.correct ? 0 : 1;
      return;
    }
    TerminalProgress progress;
    const Evaluation e = simulate(resolve_scenario(*cmd, args->engine), &progress);
    progress.finish();
    print_report(report_view(e), args->engine.format);
    g_exit_code = e.diagnosis.correct ? 0 : 1;
  });
}

}  // namespace shardlens::cli

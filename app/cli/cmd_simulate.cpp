// `simulate` (report, JSON, --out files, --figures) and `diagnose` (exit code for pipelines).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "app/cli/figures.h"
#include "app/cli/like.h"
#include "core/io/files.h"
#include "core/io/staged_directory.h"
#include "core/report/export.h"
#include "core/report/report.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"

namespace shardlens::cli {

namespace {

struct SimulateArgs {
  EngineFlags engine;
  std::string out;
  std::vector<std::string> figures;
  int dpi = 150;
  std::string run_file;
  std::string like;      // a run file whose recorded settings are simulated
  std::string save_run;  // the simulation saved as a run file
};

void write_outputs(const std::vector<Evaluation>& evaluations, const SimulateArgs& a) {
  if (a.out.empty()) return;
  size_t count = 0;
  StagedDirectory stage(a.out);  // every file complete, or none replaced
  stage.write_and_commit([&] {
    for (const Evaluation& e : evaluations) {
      const std::string dir = epoch_dir(stage.path(), e, evaluations.size());
      count += export_data(e, dir, {"csv", "json", "npy"}).size();
      if (!a.figures.empty()) count += write_figures(e, dir, a.figures, a.dpi).size();
    }
  });
  std::cerr << "wrote " << count << " files to " << a.out << "\n";
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
  cmd->add_option("--like", args->like,
                  "Simulate a run file (.slrun) with its recorded settings (flags given override "
                  "them) and say whether the simulation equals the run, per rank and synced; "
                  "exit 1 when it does not");
  cmd->add_option("--save-run", args->save_run, "Save the simulation as a run file (.slrun)");
  cmd->callback([cmd, args] {
    if (!args->out.empty() || !args->save_run.empty()) {
      std::vector<std::string> inputs = engine_inputs(*cmd, args->engine, args->run_file);
      if (!args->like.empty()) inputs.push_back(args->like);
      if (!args->out.empty())
        require_output(args->out, OutputKind::Directory, inputs, export_writes);
      if (!args->save_run.empty()) require_output(args->save_run, OutputKind::File, inputs);
    }
    if (!args->like.empty()) {
      if (!args->run_file.empty()) throw InputError("--like: not with --run");
      return run_like(*cmd, args->engine, args->like);
    }
    std::vector<Evaluation> e = evaluations_for(*cmd, args->engine, args->run_file);
    // Only the report is left to write: it reads no per-sample array.
    if (args->out.empty() && args->save_run.empty())
      for (Evaluation& one : e) release_samples(one);
    print_reports(e, args->engine.format);
    write_outputs(e, *args);
    if (!args->save_run.empty()) {
      std::vector<RunFile> runs;
      for (const Evaluation& one : e) runs.push_back(run_from_evaluation(one));
      save_run_epochs(runs, args->save_run);
    }
  });
}

void register_diagnose(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose",
      "Check a simulated scenario or a run file; exit 1 when the matrix, or the accuracy "
      "it logged, is wrong");
  add_engine_flags(*cmd, args->engine);
  cmd->add_option("--run", args->run_file, "A run file (.slrun) to diagnose instead of simulating");
  cmd->add_option("--like", args->like,
                  "As simulate --like: the run file's recorded settings simulated and compared "
                  "with it; exit 1 when the simulation differs from the run");
  cmd->callback([cmd, args] {
    if (!args->like.empty()) {
      if (!args->run_file.empty()) throw InputError("--like: not with --run");
      return run_like(*cmd, args->engine, args->like);
    }
    // A run file and a simulation are reported alike; an incomplete run is wrong (exit 1)
    // with its "incomplete-run" finding, as the GUI shows it.
    // Several epochs: each is reported, and any wrong one makes the exit code 1.
    std::vector<Evaluation> e = evaluations_for(*cmd, args->engine, args->run_file);
    for (Evaluation& one : e) release_samples(one);  // the report reads no per-sample array
    print_reports(e, args->engine.format);
    g_exit_code = all_correct(e) ? 0 : 1;
  });
}

}  // namespace shardlens::cli

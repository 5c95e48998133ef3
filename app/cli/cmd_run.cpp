// `shardlens-cli run`: a real multi-rank evaluation of a TorchScript model (LibTorch, c10d
// Gloo, or NCCL + the CUDA kernel with --backend nccl). Without RANK/WORLD_SIZE this process
// launches the ranks; under torchrun it is one.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "app/cli/terminal_progress.h"
#include "core/io/files.h"
#include "core/io/output_text.h"
#include "core/realrun/torch_plugin.h"
#include "core/report/report.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/lessons.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"
#include "shardlens/config.h"

namespace shardlens::cli {

namespace {

struct RunArgs {
  EngineFlags engine;
  std::string model = resource_dir() + "/models/fashion_mnist_reference.pt";
  std::string images;
  std::string out;
  int timeout = 60;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  std::string backend = "gloo";
  std::string iface;
};

void run_real(const CLI::App& cmd, const RunArgs& a) {
#if !SHARDLENS_HAS_CUDA
  if (a.backend != "gloo") {
    throw InputError("--backend " + a.backend +
                     ": this build has no CUDA/NCCL backend; use --backend gloo");
  }
#endif
  if (!a.out.empty()) {
    std::vector<std::string> inputs = engine_inputs(cmd, a.engine, "");
    inputs.push_back(a.model);
    inputs.push_back(a.images);
    require_output(a.out, OutputKind::File, inputs);
  }
  RealRunConfig config;
  config.scenario = resolve_scenario(cmd, a.engine);
  // The engine's default dataset is synthetic (no images): a real run defaults to the
  // dataset the reference model was trained for.
  if (cmd.count("--dataset") == 0 && a.engine.preset.empty())
    config.scenario.dataset = "fashion-mnist:test";
  config.model_path = a.model;
  config.images_path = a.images;
  config.timeout_s = a.timeout;
  config.master_addr = a.master_addr;
  config.master_port = a.master_port;
  config.world_size_given = cmd.count("--world-size") > 0;
  // Only an address or port the user names gets a TCPStore (which listens on the network).
  config.store_address_given = cmd.count("--master-addr") > 0 || cmd.count("--master-port") > 0;
  config.backend = a.backend;
  config.iface = a.iface;

  TerminalProgress progress;
  std::string why_not;
  const TorchPlugin* torch = torch_plugin(&why_not);
  if (!torch) throw InputError("run: " + why_not + "; simulate works without it");
  // A real run reproduces the torch that runs it: its shards follow the LibTorch the plugin
  // links (recorded in the run file as well) unless --torch-version says otherwise.
  if (cmd.count("--torch-version") == 0) {
    if (const auto linked = TorchVersion::parse_recorded(torch->libtorch_version()))
      config.scenario.sampler.torch = *linked;
  }
  const RealRunResult result = torch->real_run(config, &progress);
  progress.finish();
  if (!result.reporter) {  // a rank that is not the one writing the run
    if (!result.error.empty()) {
      std::cerr << "shardlens-cli: " << result.error << "\n";
      g_exit_code = 1;
    }
    return;
  }
  if (result.run && !a.out.empty()) {
    save_run_file(*result.run, a.out);
    std::cerr << "wrote " << a.out << (result.run->meta.complete ? "" : " (incomplete run)")
              << "\n";
  }
  if (!result.error.empty()) {
    std::cerr << "shardlens-cli: run failed: " << result.error << "\n";
    g_exit_code = 1;
    return;
  }
  if (!result.run->meta.sync_note.empty())
    std::cerr << "shardlens-cli: note: " << result.run->meta.sync_note << "\n";
  const Evaluation e = evaluation_from_run(*result.run, a.out.empty() ? "run" : a.out);
  if (a.engine.format == "json") {
    std::cout << json_text(report_json(e), 2) << "\n";
  } else {
    std::cout << report_text(e);
  }
}

}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Evaluate a TorchScript model with real rank processes (c10d store + Gloo or NCCL)");
  add_engine_flags(*cmd, args->engine);
  cmd->add_option("--model", args->model, "TorchScript model: raw pixels [N,1,H,W] in, logits out")
      ->capture_default_str();
  cmd->add_option("--images", args->images,
                  "IDX image file of the dataset (default: derived from --dataset)");
  cmd->add_option("--out", args->out, "Run file to write (.slrun)");
  cmd->add_option("--timeout", args->timeout, "Seconds any collective or store wait may take")
      ->check(CLI::Range(1, kMaxRunTimeoutSeconds))
      ->capture_default_str();
  cmd->add_option("--master-addr", args->master_addr,
                  "Launcher mode: host the store on this address (it listens there only) "
                  "instead of the default private file store (which opens no socket)")
      ->capture_default_str();
  cmd->add_option("--master-port", args->master_port,
                  "Launcher mode: the store's port (0: any free port; implies a network store)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--iface", args->iface,
                  "A rank's network interface for Gloo (and NCCL's bootstrap), e.g. eth1 "
                  "(default: GLOO_SOCKET_IFNAME, else the interface that routes to "
                  "MASTER_ADDR; loopback for a local run)");
  cmd->add_option("--backend", args->backend,
                  "Collective backend: gloo (CPU) or nccl (CUDA kernel + NCCL, one GPU per "
                  "rank, device LOCAL_RANK)")
      ->check(CLI::IsMember({"gloo", "nccl"}))
      ->capture_default_str();
  cmd->callback([cmd, args] { run_real(*cmd, *args); });
}

}  // namespace shardlens::cli

// `shardlens-cli predict`: a TorchScript model's predicted class of every index of a dataset,
// written as an int64 .npy (what `--predictor npy:FILE` and numpy read). The same predictions
// and cache as the `model:` predictor (core/realrun/model_predictions.h).
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/terminal_progress.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/realrun/model_predictions.h"
#include "core/sim/specs.h"

namespace shardlens::cli {

namespace {

struct PredictArgs {
  std::string model = "reference";
  std::string device = "cpu";
  std::string dataset = "fashion-mnist:test";
  std::string out;
};

void predict(const PredictArgs& a) {
  std::vector<std::string> inputs = spec_files(a.dataset);
  if (a.model != "reference") inputs.push_back(a.model);
  require_output(a.out, OutputKind::File, inputs);
  const ModelPredictorSpec model =
      parse_model_predictor("model:" + a.model + ",device=" + a.device);
  TerminalProgress progress;
  const Labels labels = load_labels(a.dataset, &progress);
  const ModelPredictions p = model_predictions(model, labels, &progress);
  progress.finish();
  const std::vector<int64_t> values(p.predictions.begin(), p.predictions.end());
  write_file_atomic(a.out, npy_bytes(values, {int64_t(values.size())}));
  std::cerr << "wrote " << values.size() << " predictions to " << a.out << " ("
            << (p.from_cache ? "from the cache " : "computed, cached in ") << p.cache_file << ")\n";
}

}  // namespace

void register_predict(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Write a TorchScript model's prediction of every dataset index as an int64 .npy "
      "(cached like --predictor model:PATH)");
  cmd->add_option("--model", args->model,
                  "TorchScript model: raw pixels [N,1,H,W] in, logits out ('reference': the "
                  "Fashion-MNIST reference model)")
      ->capture_default_str();
  cmd->add_option("--device", args->device, "cpu or cuda:N")->capture_default_str();
  cmd->add_option("--dataset", args->dataset,
                  "Dataset spec with images: fashion-mnist:test|train or idx:PATH (subsets "
                  "with ,first=N or ,indices=FILE)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "The .npy file to write")->required();
  cmd->callback([args] { predict(*args); });
}

}  // namespace shardlens::cli

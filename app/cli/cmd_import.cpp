// `shardlens-cli import DUMPS... --out FILE.slrun`: users' per-rank dumps into a run file.
#include <iostream>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "app/cli/terminal_progress.h"
#include "core/dataset/dataset_spec.h"
#include "core/io/files.h"
#include "core/realrun/torch_plugin.h"
#include "core/report/report.h"
#include "core/report/verdict_summary.h"
#include "core/runfile/import.h"
#include "core/runfile/run_evaluation.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"
#include "shardlens/config.h"

namespace shardlens::cli {

namespace {

struct ImportArgs {
  std::vector<std::string> dumps;
  std::string out;
  std::string dataset;
  std::string predictions;
  int32_t classes = 0;
  int world_size = 0;
  int ignore_index = -1;
  std::string task;  // empty: as the dumps say
  std::string format = "text";
};

void run_import(const ImportArgs& a) {
  std::vector<std::string> inputs = a.dumps;
  inputs.push_back(a.predictions);
  for (std::string& f : spec_files(a.dataset)) inputs.push_back(std::move(f));
  require_output(a.out, OutputKind::File, inputs);
  ImportOptions options;
  options.dataset = a.dataset;
  options.predictions = a.predictions;
  if (a.classes > 0) options.classes = a.classes;
  if (a.world_size > 0) options.world_size = a.world_size;
  options.ignore_index = a.ignore_index;
  if (!a.task.empty()) options.task = task_from_string(a.task);
  // .pt dumps need LibTorch's unpickler: loaded only when a .pt file is imported.
  options.pt_reader = read_pt_dump;
  TerminalProgress progress;
  // Dumps of several epochs become one run file with every epoch.
  ImportedRun imported = import_epochs(a.dumps, options, &progress);
  progress.finish();
  const std::string kind = dump_kind_text(imported.epochs.front());
  save_run_epochs(imported.epochs, a.out);
  std::vector<Evaluation> epochs = evaluations_from_runs(std::move(imported.epochs), a.out);
  for (const std::string& note : imported.notes)
    std::cerr << "shardlens-cli: note: " << note << "\n";
  if (a.format == "verdict") {
    std::cout << verdict_summaries_json(epochs).dump() << "\n";
    return;
  }
  if (a.format != "json") {
    const Evaluation& e = epochs.front();
    std::cout << "Imported " << a.dumps.size() << " dump(s), world size " << e.meta.world_size
              << ", " << e.classes() << " classes";
    if (epochs.size() > 1) {
      // Loaders and validations within an epoch make evaluations that are not epochs.
      std::set<int64_t> distinct;
      for (const Evaluation& one : epochs) distinct.insert(one.epoch());
      std::cout << ", " << epochs.size()
                << (distinct.size() == epochs.size() ? " epochs" : " evaluations");
    }
    std::cout << " -> " << a.out << "\n" << kind << "\n";
    if (e.meta.class_counts_source != "dataset") {
      std::cout << "Note: no --dataset given; true class counts are estimated from the distinct "
                   "samples the ranks evaluated.\n";
    }
  }
  print_reports(epochs, a.format);
}

}  // namespace

void register_import(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand("import",
                                     "Import per-rank dumps (.npz, .npy, .csv, .pt) of a real "
                                     "evaluation, one or several epochs, into a run file");
  cmd->add_option("dumps", args->dumps, "Per-rank dump files")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "Run file to write (.slrun)")->required();
  cmd->add_option("--dataset", args->dataset,
                  "Dataset spec giving the true class counts (e.g. fashion-mnist:test)");
  cmd->add_option("--predictions", args->predictions,
                  "One prediction per dataset index (.npy or .csv), for the expected matrix of "
                  "samples the run never evaluated; needs --dataset")
      ->check(CLI::ExistingFile);
  cmd->add_option("--classes", args->classes, "Number of classes when no dataset is given")
      ->check(CLI::Range(1, int(kMaxClasses)));
  cmd->add_option("--world-size", args->world_size, "World size when the dumps do not say")
      ->check(CLI::Range(1, kMaxWorldSize));
  cmd->add_option("--ignore-index", args->ignore_index,
                  "torchmetrics ignore_index of the run (a dump's recorded one when not given)");
  cmd->add_option("--task", args->task,
                  "What a record counts, when the dumps do not say: classification, or "
                  "segmentation, tokens, multilabel (a sample's cells; a CSV with a count column "
                  "is segmentation unless told)")
      ->check(CLI::IsMember({"classification", "segmentation", "tokens", "multilabel"}));
  // "verdict": what a program acting on every validation needs (verdict_summary.h), in one
  // line of JSON without the matrices that make the full report megabytes long.
  cmd->add_option("--format", args->format,
                  "Output format; verdict: the verdict alone as one line of JSON (no matrices)")
      ->check(CLI::IsMember({"text", "json", "verdict"}))
      ->capture_default_str();
  cmd->callback([args] { run_import(*args); });
}

}  // namespace shardlens::cli

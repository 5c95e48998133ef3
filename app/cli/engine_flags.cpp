#include "app/cli/engine_flags.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/terminal_progress.h"
#include "core/io/csv.h"
#include "core/io/npy.h"
#include "core/model/types.h"
#include "core/report/report.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/validations.h"

namespace shardlens::cli {

void add_format_flag(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

void add_engine_flags(CLI::App& cmd, EngineFlags& f) {
  cmd.add_option("--preset", f.preset,
                 "Lesson preset name or scenario JSON file (flags override it)");
  cmd.add_option("--dataset", f.dataset,
                 "synthetic:classes=10,per-class=50 | synthetic:counts=3,5,7 | "
                 "synthetic:classes=C,n=N,zipf=S | fashion-mnist:test | fashion-mnist:train | "
                 "idx:PATH | npy:PATH | csv:PATH");
  cmd.add_option("--predictor", f.predictor,
                 "perfect | noisy:accuracy=0.9,seed=1[,structure=adjacent] | npy:PATH | csv:PATH");
  cmd.add_option("--world-size", f.world_size, "Number of ranks (W)");
  cmd.add_option("--batch-size", f.batch_size, "DataLoader batch_size");
  cmd.add_option("--sampler", f.sampler,
                 "distributed | unrepeated | sequential | none | accelerate | lightning-wrapper");
  cmd.add_flag("--split-batches", f.split_batches,
               "Accelerate split_batches=True: each batch split into W slices of B / W");
  cmd.add_flag("--no-even-batches", f.no_even_batches,
               "Accelerate even_batches=False: no cycled completion of the last round");
  cmd.add_option("--accelerate-input", f.accelerate_input,
                 "What the loader given to accelerator.prepare() samples with: loader (its own "
                 "sampler, default) | distributed-sampler (already a DistributedSampler: "
                 "sharded twice, each rank keeps 1/W of its own shard; --shuffle/--seed/"
                 "--sampler-drop-last are then the DistributedSampler's) | iterable-dispatch "
                 "(an IterableDataset's DataLoaderDispatcher: refused, record the run "
                 "instead)");
  cmd.add_option("--accelerate-shuffle", f.accelerate_shuffle,
                 "How Accelerate shuffles (--shuffle): global-rng (default, "
                 "use_seedable_sampler=False: the generator prepare() seeds from the global "
                 "RNG; --seed is the global seed, exact when nothing drew from the RNG before "
                 "prepare) | seedable (use_seedable_sampler=True: randperm seeded seed + epoch)");
  cmd.add_option("--inner-sampler", f.inner_sampler,
                 "The sampler Lightning wraps (--sampler lightning-wrapper): sequential | "
                 "weighted-random | recorded");
  cmd.add_option("--inner-weights", f.inner_weights,
                 "weighted-random weights: npy:PATH, csv:PATH or w0,w1,... (default uniform)");
  cmd.add_option("--inner-num-samples", f.inner_num_samples,
                 "weighted-random num_samples (default: the number of weights)");
  cmd.add_option("--inner-indices", f.inner_indices,
                 "recorded index list: npy:PATH, csv:PATH or i0,i1,...");
  cmd.add_option("--validations-per-epoch", f.validations_per_epoch,
                 "Lightning val_check_interval: validations in the epoch (each reported)");
  cmd.add_flag("--shuffle", f.shuffle,
               "Shuffle the evaluation order (seed + epoch; Accelerate: see "
               "--accelerate-shuffle)");
  cmd.add_flag("--no-shuffle", f.no_shuffle, "Keep dataset order (default, as a val loader)");
  cmd.add_option("--seed", f.seed,
                 "Sampler seed (PL_GLOBAL_SEED); Accelerate's default shuffle: the global "
                 "torch.manual_seed");
  cmd.add_option("--epoch", f.epoch,
                 "Epoch passed to set_epoch; with --run, the epoch of the run to report");
  cmd.add_flag("--sampler-drop-last", f.sampler_drop_last, "DistributedSampler(drop_last=True)");
  cmd.add_flag("--loader-drop-last", f.loader_drop_last, "DataLoader(drop_last=True)");
  cmd.add_option("--limit-batches", f.limit_batches,
                 "Lightning limit_val_batches: an int (batches) or a float fraction; 1 != 1.0");
  cmd.add_option("--rank-seeds", f.rank_seeds, "One sampler seed per rank (divergence)")
      ->delimiter(',');
  cmd.add_flag("--sanity-leak", f.sanity_leak, "Count the sanity-check batches into the metric");
  cmd.add_option("--sanity-steps", f.sanity_steps, "num_sanity_val_steps (default 2)");
  cmd.add_option("--sync", f.sync,
                 sync_strategy_choices() +
                     " (all-reduce: the ranks' sum, as torchmetrics' compute() all_gathers "
                     "the states and sums them)");
  cmd.add_option("--counter-dtype", f.counter_dtype, "int64 | float32 | float16 | bfloat16");
  cmd.add_option("--torch-version", f.torch_version,
                 "PyTorch semantics to imitate: 1.13, 2.7, 2.15.0+cu130... (default " +
                     TorchVersion{}.to_string() +
                     ", a current torch from pip; they differ only for randperm at n >= "
                     "214,748,364, where torch >= 2.7 shuffles differently)");
  cmd.add_option("--ignore-index", f.ignore_index, "torchmetrics ignore_index (-1: none)");
  add_format_flag(cmd, f.format);
}

namespace {

// A list of numbers: npy:PATH, csv:PATH (first column) or inline a,b,c.
template <class T>
std::vector<T> read_number_list(const std::string& spec) {
  std::vector<T> out;
  if (spec.rfind("npy:", 0) == 0) {
    if constexpr (std::is_same_v<T, double>)
      return read_npy_doubles(spec.substr(4));
    else
      return read_npy_integers(spec.substr(4));
  }
  if (spec.rfind("csv:", 0) == 0) {
    const CsvTable table = read_csv(spec.substr(4));
    for (const auto& row : table.rows) {
      if (row.empty()) continue;
      try {
        out.push_back(static_cast<T>(std::stod(row.front())));
      } catch (const std::exception&) {
        throw InputError(spec + ": '" + row.front() + "' is not a number");
      }
    }
    return out;
  }
  size_t begin = 0;
  while (begin <= spec.size()) {
    const size_t end = std::min(spec.find(',', begin), spec.size());
    const std::string item = spec.substr(begin, end - begin);
    size_t used = 0;
    try {
      if constexpr (std::is_same_v<T, double>)
        out.push_back(std::stod(item, &used));
      else
        out.push_back(std::stoll(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty())
      throw InputError("'" + spec + "': '" + item +
                       "' is not a number (give npy:PATH, csv:PATH "
                       "or a comma-separated list)");
    begin = end + 1;
  }
  return out;
}

}  // namespace

Scenario resolve_scenario(const CLI::App& cmd, const EngineFlags& f) {
  return apply_engine_flags(cmd, f, f.preset.empty() ? Scenario{} : load_preset(f.preset));
}

Scenario apply_engine_flags(const CLI::App& cmd, const EngineFlags& f, Scenario s) {
  auto given = [&](const char* flag) { return cmd.count(flag) > 0; };
  if (given("--dataset")) s.dataset = f.dataset;
  if (given("--predictor")) s.predictor = f.predictor;
  if (given("--world-size")) s.sampler.world_size = f.world_size;
  if (given("--batch-size")) {
    if (f.batch_size < 1) throw InputError("--batch-size: must be at least 1");
    s.loader.batch_size = f.batch_size;
  }
  if (given("--sampler")) s.sampler.kind = parse_sampler_kind(f.sampler);
  if (f.shuffle && f.no_shuffle)
    throw InputError("--shuffle and --no-shuffle contradict each other");
  if (f.shuffle) s.sampler.shuffle = true;
  if (f.no_shuffle) s.sampler.shuffle = false;
  if (given("--seed")) s.sampler.seed = f.seed;
  if (given("--epoch")) s.sampler.epoch = f.epoch;
  if (f.sampler_drop_last) s.sampler.drop_last = true;
  if (f.loader_drop_last) s.loader.drop_last = true;
  if (given("--limit-batches")) s.loader.limit = BatchLimit::parse(f.limit_batches);
  if (given("--rank-seeds")) s.sampler.rank_seeds = f.rank_seeds;
  if (f.sanity_leak) s.loader.sanity_leak = true;
  if (given("--sanity-steps")) s.loader.sanity_steps = f.sanity_steps;
  if (given("--sync")) s.sync = parse_sync_strategy(f.sync);
  if (given("--counter-dtype")) s.dtype = parse_counter_dtype(f.counter_dtype);
  if (given("--torch-version")) s.sampler.torch = TorchVersion::parse(f.torch_version);
  if (given("--ignore-index")) s.ignore_index = f.ignore_index;
  if (f.split_batches) s.sampler.split_batches = true;
  if (f.no_even_batches) s.sampler.even_batches = false;
  if (given("--accelerate-input"))
    s.sampler.accelerate_input = parse_accelerate_input(f.accelerate_input);
  if (given("--accelerate-shuffle"))
    s.sampler.accelerate_shuffle = parse_accelerate_shuffle(f.accelerate_shuffle);
  if (given("--inner-sampler")) s.sampler.inner.kind = parse_inner_sampler_kind(f.inner_sampler);
  if (given("--inner-weights")) s.sampler.inner.weights = read_number_list<double>(f.inner_weights);
  if (given("--inner-num-samples")) {
    if (f.inner_num_samples < 0) throw InputError("--inner-num-samples: must not be negative");
    s.sampler.inner.num_samples = f.inner_num_samples;
  }
  if (given("--inner-indices"))
    s.sampler.inner.indices = read_number_list<int64_t>(f.inner_indices);
  if (given("--validations-per-epoch")) {
    if (f.validations_per_epoch < 1 || f.validations_per_epoch > 1000)
      throw InputError("--validations-per-epoch: must be 1 to 1000");
    s.validations_per_epoch = f.validations_per_epoch;
  }
  if (s.sampler.world_size < 1) throw InputError("--world-size: must be at least 1");
  return s;
}

std::vector<Evaluation> evaluations_for(const CLI::App& cmd, const EngineFlags& flags,
                                        const std::string& run_file) {
  std::vector<Evaluation> out;
  if (run_file.empty()) {
    TerminalProgress progress;
    out = simulate_validations(resolve_scenario(cmd, flags), &progress);
    progress.finish();
    return out;
  }
  out = load_run_evaluations(run_file);
  if (cmd.count("--epoch") == 0) return out;
  // Every evaluation of that epoch (its validations and dataloaders).
  std::vector<Evaluation> chosen;
  for (Evaluation& e : out)
    if (e.epoch() == flags.epoch) chosen.push_back(std::move(e));
  if (chosen.empty()) select_epoch(std::move(out), flags.epoch, "--epoch: " + run_file);  // throws
  return chosen;
}

void print_reports(const std::vector<Evaluation>& evaluations, const std::string& format) {
  if (format == "json") {
    std::cout << reports_json(evaluations).dump(2) << "\n";
    return;
  }
  if (evaluations.size() == 1) {
    std::cout << report_text(evaluations.front());
    return;
  }
  size_t wrong = 0;
  for (const Evaluation& e : evaluations) {
    std::string label = evaluation_label(e);
    label[0] = char(std::toupper(static_cast<unsigned char>(label[0])));
    std::cout << "### " << label << "\n\n" << report_text(e) << "\n";
    wrong += !e.diagnosis.correct;
  }
  const bool by_epoch =
      std::all_of(evaluations.begin(), evaluations.end(), [](const Evaluation& e) {
        return e.validation() < 0 && e.dataloader() < 0 &&
               (e.meta.stage.empty() || e.meta.stage == "validate");
      });
  std::cout << (by_epoch                                ? "Epochs: "
                : evaluations.front().validation() >= 0 ? "Validations: "
                                                        : "Evaluations: ")
            << wrong << " of " << evaluations.size() << " wrong\n";
}

bool all_correct(const std::vector<Evaluation>& evaluations) {
  return std::all_of(evaluations.begin(), evaluations.end(),
                     [](const Evaluation& e) { return e.diagnosis.correct; });
}

std::string epoch_dir(const std::string& dir, const Evaluation& e, size_t count) {
  if (count == 1) return dir;
  std::string name = "epoch" + std::to_string(e.epoch());
  if (!e.meta.stage.empty() && e.meta.stage != "validate") name = e.meta.stage + "_" + name;
  if (e.validation() >= 0) name += "_validation" + std::to_string(e.validation());
  if (e.dataloader() >= 0) name += "_dataloader" + std::to_string(e.dataloader());
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace shardlens::cli

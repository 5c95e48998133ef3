#pragma once
// The engine flags shared by simulate, shards, diagnose, export and run. Flags follow
// PyTorch / Lightning names; a --preset is applied first and flags given override it.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"

namespace shardlens::cli {

struct EngineFlags {
  std::string preset;
  std::string dataset, predictor, sampler, sync, counter_dtype, torch_version, limit_batches;
  int world_size = 0;
  int64_t batch_size = 0, seed = 0, epoch = 0;
  bool shuffle = false, no_shuffle = false;
  bool sampler_drop_last = false, loader_drop_last = false, sanity_leak = false;
  int sanity_steps = 2, ignore_index = -1;
  std::vector<int64_t> rank_seeds;
  std::string format = "text";
  // Accelerate and Lightning's wrapped samplers.
  bool split_batches = false, no_even_batches = false;
  std::string accelerate_input, accelerate_shuffle;
  std::string inner_sampler, inner_weights, inner_indices;
  int64_t inner_num_samples = 0;
  int validations_per_epoch = 1;
};

void add_engine_flags(CLI::App& cmd, EngineFlags& flags);
void add_format_flag(CLI::App& cmd, std::string& format);
// Preset (or defaults) with every flag the user gave applied on top.
Scenario resolve_scenario(const CLI::App& cmd, const EngineFlags& flags);
// `base` with every flag the user gave applied on top (--preset aside).
Scenario apply_engine_flags(const CLI::App& cmd, const EngineFlags& flags, Scenario base);
// The evaluations a command reports: every epoch of the run file when `run_file` is given
// (only the one --epoch names, when given), else the simulation of the resolved scenario,
// with a progress bar on a terminal. A run and a simulation are the same to every command.
std::vector<Evaluation> evaluations_for(const CLI::App& cmd, const EngineFlags& flags,
                                        const std::string& run_file);
// The report of one evaluation, or {"epochs": [...]} / one report per epoch for several.
void print_reports(const std::vector<Evaluation>& evaluations, const std::string& format);
// Whether every evaluation's reported matrix is right.
bool all_correct(const std::vector<Evaluation>& evaluations);
// Where an epoch's files go: `dir` for a single evaluation, else dir/epoch<e>.
std::string epoch_dir(const std::string& dir, const Evaluation& e, size_t count);

}  // namespace shardlens::cli

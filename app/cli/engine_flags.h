#pragma once
// The engine flags shared by simulate, shards, diagnose, export and run. Flags follow
// PyTorch / Lightning names; a --preset is applied first and flags given override it.
#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"

namespace shardlens::cli {

// What the user typed for each setting of the scenario table (core/evaluation/
// scenario_settings.h), by the setting's key; add_engine_flags makes one flag per row.
struct EngineFlags {
  std::string preset;
  std::string format = "text";
  std::map<std::string, int64_t> ints;       // Int settings
  std::map<std::string, std::string> texts;  // Choice, Text and list settings, as typed
  std::map<std::string, bool> on, off;       // Bool settings: their on and off flags
  int64_t epoch() const { return ints.count("epoch") ? ints.at("epoch") : 0; }
};

void add_engine_flags(CLI::App& cmd, EngineFlags& flags);
void add_format_flag(CLI::App& cmd, std::string& format);
// Preset (or defaults) with every flag the user gave applied on top, validated.
Scenario resolve_scenario(const CLI::App& cmd, const EngineFlags& flags);
// `base` with every flag the user gave applied on top (--preset aside), not yet validated.
Scenario apply_engine_flags(const CLI::App& cmd, const EngineFlags& flags, Scenario base);
// The evaluations a command reports: every epoch of the run file when `run_file` is given
// (only the one --epoch names, when given), else the simulation of the resolved scenario,
// with a progress bar on a terminal. A run and a simulation are the same to every command.
std::vector<Evaluation> evaluations_for(const CLI::App& cmd, const EngineFlags& flags,
                                        const std::string& run_file);
// The files the engine flags make a command read: a scenario file given as --preset, `run_file`,
// and the files of the dataset, predictor and list settings (npy:PATH, csv:PATH, names=...),
// as given or from the scenario file. What an output must not be (require_output).
std::vector<std::string> engine_inputs(const CLI::App& cmd, const EngineFlags& flags,
                                       const std::string& run_file);
// The report of one evaluation, or {"epochs": [...]} / one report per epoch for several.
void print_reports(const std::vector<Evaluation>& evaluations, const std::string& format);
// Whether every evaluation's reported matrix is right.
bool all_correct(const std::vector<Evaluation>& evaluations);
// Where an epoch's files go: `dir` for a single evaluation, else dir/epoch<e>.
std::string epoch_dir(const std::string& dir, const Evaluation& e, size_t count);

}  // namespace shardlens::cli

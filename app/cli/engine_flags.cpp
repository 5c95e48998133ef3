#include "app/cli/engine_flags.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/terminal_progress.h"
#include "core/dataset/dataset_spec.h"
#include "core/evaluation/scenario_settings.h"
#include "core/report/report.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/validations.h"
#include "core/vocabulary/types.h"

namespace shardlens::cli {

void add_format_flag(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

void add_engine_flags(CLI::App& cmd, EngineFlags& f) {
  cmd.add_option("--preset", f.preset,
                 "Lesson preset name or scenario JSON file (flags override it)");
  for (const ScenarioSetting& row : scenario_settings()) {
    const std::string help = setting_help(row);
    switch (row.kind) {
      case SettingKind::Bool:
        if (!row.cli_flag.empty()) cmd.add_flag(row.cli_flag, f.on[row.key], help);
        if (!row.cli_off_flag.empty())
          cmd.add_flag(row.cli_off_flag, f.off[row.key],
                       row.cli_flag.empty() ? "Turn off: " + help
                                            : "Turn off " + row.cli_flag + " (the default)");
        break;
      case SettingKind::Int:
        if (!row.cli_flag.empty()) cmd.add_option(row.cli_flag, f.ints[row.key], help);
        break;
      default:
        if (!row.cli_flag.empty()) cmd.add_option(row.cli_flag, f.texts[row.key], help);
        break;
    }
  }
  add_format_flag(cmd, f.format);
}

namespace {

// Whether --preset names a scenario file (load_preset's rule) rather than a lesson.
bool preset_is_file(const EngineFlags& f) {
  std::error_code ec;
  return !f.preset.empty() &&
         (f.preset.find('/') != std::string::npos || std::filesystem::exists(f.preset, ec));
}

// Runs `work`; an InputError it throws names each setting as the user gave it: by its flag
// when given on the command line, else by the --preset file and its key.
template <class F>
auto worded_by_origin(const CLI::App& cmd, const EngineFlags& f, F&& work) {
  try {
    return work();
  } catch (const InputError& e) {
    if (!preset_is_file(f)) throw;
    throw InputError(for_origins(e.what(), [&](const ScenarioSetting& s) {
      const bool given = (!s.cli_flag.empty() && cmd.count(s.cli_flag) > 0) ||
                         (!s.cli_off_flag.empty() && cmd.count(s.cli_off_flag) > 0);
      return given ? SettingOrigin{} : SettingOrigin{SettingOrigin::Kind::File, f.preset};
    }));
  }
}

}  // namespace

Scenario resolve_scenario(const CLI::App& cmd, const EngineFlags& f) {
  return worded_by_origin(cmd, f, [&] {
    Scenario s = apply_engine_flags(cmd, f, f.preset.empty() ? Scenario{} : load_preset(f.preset));
    validate(s);
    // What the scenario declares (a synthetic dataset's size) against the memory budget before
    // a label is drawn, named after the scenario file when the dataset came from it.
    const auto origin = [&](const std::string& flag) {
      return !f.preset.empty() && cmd.count(flag) == 0 ? f.preset : flag;
    };
    check_simulation_budget(s, origin("--dataset"), origin(sampler_list_flag(s)));
    return s;
  });
}

Scenario apply_engine_flags(const CLI::App& cmd, const EngineFlags& f, Scenario s) {
  const auto given = [&](const std::string& flag) { return !flag.empty() && cmd.count(flag) > 0; };
  for (const ScenarioSetting& row : scenario_settings()) {
    if (row.kind == SettingKind::Bool) {
      const bool on = given(row.cli_flag), off = given(row.cli_off_flag);
      if (on && off)
        throw InputError(row.cli_flag + " and " + row.cli_off_flag + " contradict each other");
      if (on || off) row.set_bool(s, on);
    } else if (given(row.cli_flag)) {
      if (row.kind == SettingKind::Int)
        row.set_int(s, f.ints.at(row.key));
      else
        set_setting_text(row, s, f.texts.at(row.key));
    }
  }
  return s;
}

std::vector<Evaluation> evaluations_for(const CLI::App& cmd, const EngineFlags& flags,
                                        const std::string& run_file) {
  std::vector<Evaluation> out;
  if (run_file.empty()) {
    TerminalProgress progress;
    const Scenario s = resolve_scenario(cmd, flags);
    out = worded_by_origin(cmd, flags, [&] { return simulate_validations(s, &progress); });
    progress.finish();
    return out;
  }
  out = load_run_evaluations(run_file);
  if (cmd.count("--epoch") == 0) return out;
  // Every evaluation of that epoch (its validations and dataloaders).
  std::vector<Evaluation> chosen;
  for (Evaluation& e : out)
    if (e.epoch() == flags.epoch()) chosen.push_back(std::move(e));
  if (chosen.empty())
    select_epoch(std::move(out), flags.epoch(), "--epoch: " + run_file);  // throws
  return chosen;
}

std::vector<std::string> engine_inputs(const CLI::App& cmd, const EngineFlags& flags,
                                       const std::string& run_file) {
  std::vector<std::string> files;
  if (!run_file.empty()) files.push_back(run_file);
  if (preset_is_file(flags)) files.push_back(flags.preset);
  const auto add = [&files](const std::string& spec) {
    for (std::string& f : spec_files(spec)) files.push_back(std::move(f));
  };
  for (const auto& [key, text] : flags.texts)
    if (cmd.count(scenario_setting(key).cli_flag) > 0) add(text);
  if (run_file.empty()) {
    try {  // the scenario file's own specs; a scenario that does not resolve is reported later
      const Scenario s = apply_engine_flags(
          cmd, flags, flags.preset.empty() ? Scenario{} : load_preset(flags.preset));
      add(s.dataset);
      add(s.predictor);
    } catch (const InputError&) {
    }
  }
  return files;
}

void print_reports(const std::vector<Evaluation>& evaluations, const std::string& format) {
  if (format == "json") {
    write_reports_json(std::cout, evaluations);  // the matrices streamed, no tree in memory
    std::cout << "\n";
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

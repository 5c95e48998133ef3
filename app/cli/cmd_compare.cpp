// `compare A B`: two evaluations side by side — run files (RUN.slrun, or RUN.slrun@E for one
// epoch of several, RUN.slrun@E#K for the K-th evaluation of an epoch of several), scenario files
// or lesson presets. Exit 0 when the reported matrices are equal, 1 when they differ, 2 on bad
// input.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/engine_flags.h"
#include "core/io/output_text.h"
#include "core/report/compare.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/vocabulary/types.h"

namespace shardlens::cli {

namespace {

struct CompareArgs {
  std::string a, b;
  std::string format = "text";
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// One side: a run (an epoch of it), a scenario file or a preset, as the user named it.
Evaluation operand(const std::string& text) {
  const size_t at = text.rfind('@');
  const std::string path = at == std::string::npos ? text : text.substr(0, at);
  if (ends_with(path, ".slrun")) {
    std::vector<Evaluation> epochs = load_run_evaluations(path);
    if (at == std::string::npos) {
      if (epochs.size() == 1) return std::move(epochs.front());
      throw InputError(text + ": holds " + std::to_string(epochs.size()) + " epochs; name one as " +
                       path + "@EPOCH");
    }
    // RUN@E, or RUN@E#K for the K-th evaluation of epoch E (its loaders and validations).
    const std::string tail = text.substr(at + 1);
    const size_t hash = tail.find('#');
    const std::string e = tail.substr(0, hash);
    char* end = nullptr;
    const long long want = std::strtoll(e.c_str(), &end, 10);
    if (e.empty() || *end != '\0') throw InputError(text + ": '" + e + "' is not an epoch number");
    std::vector<Evaluation> of_epoch;
    for (Evaluation& one : epochs)
      if (one.epoch() == want) of_epoch.push_back(std::move(one));
    if (of_epoch.empty()) return select_epoch(std::move(epochs), want, path);  // throws
    if (hash == std::string::npos && of_epoch.size() == 1) return std::move(of_epoch.front());
    std::string labels;
    for (size_t k = 0; k < of_epoch.size(); ++k)
      labels += (k ? "; " : "") + std::to_string(k) + ": " + evaluation_label(of_epoch[k]);
    const std::string k_text = hash == std::string::npos ? "" : tail.substr(hash + 1);
    const long long k = std::strtoll(k_text.c_str(), &end, 10);
    if (k_text.empty() || *end != '\0' || k < 0 || k >= (long long)of_epoch.size())
      throw InputError(text + ": epoch " + e + " holds " + std::to_string(of_epoch.size()) +
                       " evaluations (" + labels + "); name one as " + path + "@" + e + "#K");
    return std::move(of_epoch[size_t(k)]);
  }
  if (at != std::string::npos)
    throw InputError(text + ": @EPOCH is for run files (.slrun); for a scenario set its epoch");
  return simulate_preset(text);  // a preset name or a scenario JSON path
}

void run_compare(const CompareArgs& args) {
  const Evaluation a = operand(args.a);
  const Evaluation b = operand(args.b);
  const Comparison c = compare_evaluations(a, b);
  if (!c.comparable) throw InputError("compare: " + args.a + " and " + args.b + ": " + c.why);
  if (args.format == "json")
    std::cout << json_text(comparison_json(a, b, c, args.a, args.b), 2) << "\n";
  else
    std::cout << comparison_text(a, b, c, args.a, args.b);
  g_exit_code = c.equal ? 0 : 1;
}

}  // namespace

void register_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two evaluations (run files, RUN.slrun@EPOCH, scenario files or presets); exit 1 "
      "when their reported matrices differ");
  cmd->add_option("a", args->a, "First: RUN.slrun[@EPOCH[#K]], SCENARIO.json or a preset")
      ->required();
  cmd->add_option("b", args->b, "Second: the same kinds")->required();
  add_format_flag(*cmd, args->format);
  cmd->callback([args] { run_compare(*args); });
}

}  // namespace shardlens::cli

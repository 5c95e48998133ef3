#include "app/cli/like.h"

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/commands.h"
#include "core/evaluation/scenario_settings.h"
#include "core/io/output_text.h"
#include "core/report/compare.h"
#include "core/report/report.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/recorded_run_simulation.h"
#include "core/vocabulary/types.h"

namespace shardlens::cli {

namespace {

using nlohmann::json;

bool flag_given(const CLI::App& cmd, const std::string& flag) {
  if (flag.empty()) return false;
  if (flag == "--shuffle") return cmd.count("--shuffle") > 0 || cmd.count("--no-shuffle") > 0;
  return cmd.count(flag) > 0;
}

std::string patterns(const Evaluation& e) {
  std::string out = e.diagnosis.correct ? "correct" : "WRONG";
  for (const Finding& f : e.diagnosis.findings)
    out += std::string(" [") + pattern_id(f.pattern) + "]";
  return out;
}

template <class T>
std::string joined(const std::vector<T>& v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  return s.str();
}

// One line on how the simulation and the run differ, or that they do not.
std::string verdict(const Comparison& c) {
  if (!c.comparable) return "not comparable: " + c.why;
  if (c.equal && c.ranks_equal()) return "the simulation EQUALS the run, per rank and synced";
  std::string out = "the simulation DIFFERS from the run:";
  if (!c.same_world_size) out += " a different world size;";
  if (!c.ranks_differing.empty()) out += " ranks " + joined(c.ranks_differing) + " differ;";
  if (!c.why.empty()) out += " " + c.why + ";";
  if (c.cells_differing > 0)
    out += " the synced matrix differs in " + std::to_string(c.cells_differing) + " cell(s), " +
           std::to_string(c.rows.size()) + " row sum(s);";
  out.pop_back();
  return out;
}

}  // namespace

void run_like(const CLI::App& cmd, const EngineFlags& flags, const std::string& run_file) {
  const std::vector<Evaluation> runs = load_run_evaluations(run_file);
  json list = json::array();
  std::ostringstream text;
  size_t compared = 0, equal = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    const Evaluation& run = runs[k];
    if (cmd.count("--epoch") > 0 && run.epoch() != flags.epoch()) continue;
    const RecordedRunScenario like = recorded_run_scenario(runs, k, run_file);
    Scenario s = apply_engine_flags(cmd, flags, like.scenario);
    s.sampler.epoch = like.scenario.sampler.epoch;  // --epoch picks the run's epoch here
    std::string missing;
    for (const UnrecordedSetting& u : like.unrecorded)
      if (!flag_given(cmd, u.flag))
        missing += (missing.empty() ? "" : "; ") + u.what + ": pass " + u.flag;
    if (!missing.empty())
      throw InputError(run_file + " (" + evaluation_label(run) + "): " + missing);
    // A note says what was assumed: a flag given replaces the assumption.
    std::vector<std::string> notes;
    for (const AssumedSetting& a : like.assumptions)
      if (!flag_given(cmd, a.flag)) notes.push_back(a.what);
    validate(s);
    const bool predictor = cmd.count("--predictor") > 0 || run.scenario_recorded();
    const Evaluation sim =
        simulate_recorded_run(s, run, recorded_run_inputs(run, s, predictor, run_file));
    const Comparison c = compare_evaluations(run, sim);
    const bool same = c.comparable && c.equal && c.ranks_equal();
    ++compared;
    equal += same;
    json rows = json::array();
    for (int32_t r : c.rows) rows.push_back(r);
    list.push_back(
        {{"label", evaluation_label(run)},
         {"epoch", run.epoch()},
         {"validation", run.validation() >= 0 ? json(run.validation()) : json(nullptr)},
         {"dataloader_idx", run.dataloader() >= 0 ? json(run.dataloader()) : json(nullptr)},
         {"stage", run.meta.stage},
         {"flags", scenario_flags(s)},
         {"notes", notes},
         {"equal", same},
         {"synced_equal", c.comparable && c.equal},
         {"ranks_equal", c.ranks_equal()},
         {"ranks_differing", c.ranks_differing},
         {"cells_differing", c.cells_differing},
         {"rows_differing", rows},
         {"why", c.why},
         {"run_correct", run.diagnosis.correct},
         {"simulation", report_json(sim)}});
    text << evaluation_label(run) << ": " << verdict(c) << "\n"
         << "  simulated with: " << scenario_flags(s) << "\n";
    for (const std::string& note : notes) text << "  note: " << note << "\n";
    text << "  run: " << patterns(run) << "; simulation: " << patterns(sim) << "\n";
  }
  if (compared == 0)
    select_epoch(runs, flags.epoch(), "--epoch: " + run_file);  // throws: no such epoch
  if (flags.format == "json") {
    std::cout << json_text(
                     json{{"like", run_file}, {"equal", equal == compared}, {"evaluations", list}},
                     2)
              << "\n";
  } else {
    std::cout << "Simulation like " << run_file << "\n\n"
              << text.str() << "\nVerdict: the simulation equals the run in " << equal << " of "
              << compared << " evaluation(s).\n";
  }
  g_exit_code = equal == compared ? 0 : 1;
}

}  // namespace shardlens::cli

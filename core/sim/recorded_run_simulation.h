#pragma once
// The simulation of a recorded run (`simulate --like RUN.slrun`, the GUI's *Simulate this
// run*): the settings the run recorded (its scenario when ShardLens made it, else the
// recorder's settings_json) become a Scenario, and the run's own predictions its inputs when
// every dataset index was evaluated, so the simulation can be compared with the run rank by
// rank. scenario_flags() (scenario_settings.h) writes the scenario as flags.
#include <memory>
#include <string>
#include <vector>

#include "core/dataset/dataset_inputs.h"
#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"

namespace shardlens {

// A setting the run did not record, and the flag that supplies it.
struct UnrecordedSetting {
  std::string flag;  // "--seed", "--batch-size", ...
  std::string what;  // why it is needed
};

// The scenario that simulates a recorded run, and what the run leaves open.
struct RecordedRunScenario {
  Scenario scenario;
  std::vector<UnrecordedSetting> unrecorded;  // the simulation needs these before it can run
  std::vector<std::string> assumptions;       // defaults assumed for what the run did not record
};

// The scenario of `runs[which]` (one evaluation of a run file; the others say how many
// validations its epoch had). Throws InputError "ORIGIN: ..." when the run records no
// settings at all.
RecordedRunScenario recorded_run_scenario(const std::vector<const Evaluation*>& runs, size_t which,
                                          const std::string& origin);
RecordedRunScenario recorded_run_scenario(const std::vector<Evaluation>& runs, size_t which,
                                          const std::string& origin);

// The inputs of a simulation of `run`: from the scenario's dataset and predictor specs when
// `use_predictor` (a predictor was given or recorded), else the run's own predictions (and
// its targets, when the dataset is not named), which needs every dataset index evaluated.
// Throws InputError "ORIGIN: ... pass --predictor / --dataset" saying what is missing.
std::shared_ptr<const DatasetInputs> recorded_run_inputs(const Evaluation& run, const Scenario& s,
                                                         bool use_predictor,
                                                         const std::string& origin);

// The simulation of one evaluation of the run (its validation within the epoch included).
Evaluation simulate_recorded_run(const Scenario& s, const Evaluation& run,
                                 std::shared_ptr<const DatasetInputs> inputs);

}  // namespace shardlens

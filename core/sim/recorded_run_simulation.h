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

// What the simulation takes that the run did not record (a default, or a value inferred:
// the batch size read off the first batch), and the flag that replaces it.
struct AssumedSetting {
  std::string flag;
  std::string what;
};

// The scenario that simulates a recorded run, and what the run leaves open.
struct RecordedRunScenario {
  Scenario scenario;
  std::vector<UnrecordedSetting> unrecorded;  // the simulation needs these before it can run
  std::vector<AssumedSetting> assumptions;    // nothing the run recorded is listed
};

// The scenario of `runs[which]` (one evaluation of a run file; the others say how many
// validations its epoch had). Throws InputError "ORIGIN: ..." when the run records no
// settings at all.
RecordedRunScenario recorded_run_scenario(const std::vector<const Evaluation*>& runs, size_t which,
                                          const std::string& origin);
RecordedRunScenario recorded_run_scenario(const std::vector<Evaluation>& runs, size_t which,
                                          const std::string& origin);

// The inputs of a recorded run's simulation, and what of them the run does not know.
struct RecordedRunInputs {
  std::shared_ptr<const DatasetInputs> inputs;
  // Some samples were never evaluated (a batch limit): the run knows no prediction for them
  // (the inputs hold a placeholder), so a simulation may evaluate only what the run did.
  bool partial = false;
  std::vector<bool> evaluated;  // when partial: whether the run evaluated each dataset index
  // Every sample's true class is known: the dataset's labels, or every sample evaluated.
  // Else the class counts are the run's own (estimated from its records).
  bool labels_known = true;
  std::string origin;  // the run file, for the message
};

// The inputs of a simulation of `run`: from the scenario's dataset and predictor specs when
// `use_predictor` (a predictor was given or recorded), else the run's own predictions and
// targets as recorded (the dataset's labels when it is named): all a simulation with the
// run's settings evaluates. Throws InputError "ORIGIN: ... pass --dataset" when a recorded
// target is not a class and no dataset is named.
RecordedRunInputs recorded_run_inputs(const Evaluation& run, const Scenario& s, bool use_predictor,
                                      const std::string& origin);

// The simulation of one evaluation of the run (its validation within the epoch included).
// From partial inputs it is diagnosed as the run was, from its records (no expected matrix;
// the run's class counts when the labels are unknown); when it evaluates a sample the run
// never did, it throws InputError "ORIGIN (LABEL): the simulation evaluates N samples the
// run never evaluated ...: pass --predictor" (and --dataset when the labels are unknown).
Evaluation simulate_recorded_run(const Scenario& s, const Evaluation& run,
                                 const RecordedRunInputs& inputs);

}  // namespace shardlens

#pragma once
// Every setting of a simulation. Lesson presets are scenarios saved as JSON.
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/torchsem/loader.h"
#include "core/torchsem/sampler.h"
#include "core/torchsem/sync.h"
#include "core/vocabulary/counter.h"

namespace shardlens {

struct Scenario {
  std::string name;
  std::string title;
  std::string description;  // what the scenario shows (lessons)
  std::string dataset = "synthetic:classes=10,per-class=50";
  std::string predictor = "noisy:accuracy=0.9,seed=1";
  SamplerConfig sampler;
  LoaderConfig loader;
  SyncStrategy sync = SyncStrategy::AllReduce;
  // Accelerate's pad_across_processes before the per-step gather: each rank's tensors padded
  // to the longest of the step, so unequal last batches gather (gather_for_metrics then
  // drops the padded rows with its truncation to the remainder).
  bool pad_across_processes = false;
  CounterDtype dtype = CounterDtype::Int64;
  int ignore_index = -1;  // torchmetrics ignore_index; -1 = none
  // What the run logs of the accuracy with self.log(..., sync_dist=True), beside the matrix.
  LoggedAccuracy logged_accuracy = LoggedAccuracy::None;
  // Lightning's val_check_interval: validations in one epoch (each one evaluation).
  int validations_per_epoch = 1;
  // The settings `title` and `description` were written for: the scenario as its file (a
  // lesson's, a scenario JSON's) was loaded. A title is the scenario's only while its
  // settings are still these (core/evaluation/caption.h); edited, it is named by what
  // changed. Null for a scenario made in code or recorded with a run: its title is its own.
  // Not written to JSON.
  std::shared_ptr<const Scenario> titled;
};

// The scenario JSON, written and read through the setting table
// (core/evaluation/scenario_settings.h): a new setting is a field here and a row there.
nlohmann::json to_json(const Scenario& s);
// Reads the keys present over `base` (missing keys keep base's values). `origin` names the
// file in errors. Unknown keys are rejected so typos do not pass silently; values outside
// the table's ranges are refused (validate_ranges).
Scenario scenario_from_json(const nlohmann::json& j, const std::string& origin,
                            const Scenario& base = {});
Scenario load_scenario_file(const std::string& path);
void save_scenario_file(const Scenario& s, const std::string& path);  // atomic

}  // namespace shardlens

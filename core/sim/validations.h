#pragma once
// Several validations in one epoch (Lightning's val_check_interval): each one is its own
// evaluation. Under DDP the sampler is seeded with seed + epoch, so they all see the same
// subset (Lightning issue 17843); a wrapped random sampler draws anew for each one.
#include <memory>
#include <vector>

#include "core/dataset/dataset_inputs.h"
#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

// The scenario's validations_per_epoch evaluations of its epoch, in order (one evaluation,
// validation -1, when there is one validation). The wrapped sampler of validation v is on its
// pass epoch * K + v.
std::vector<Evaluation> simulate_validations(const Scenario& s, Progress* progress = nullptr);
// The same on prepared inputs (the GUI keeps them between toggles). `earlier`: an evaluation
// simulated before on the same inputs, whose plan and counts are reused where this
// scenario's validations leave them unchanged (evaluate(), engine.h).
std::vector<Evaluation> simulate_validations(const Scenario& s,
                                             std::shared_ptr<const DatasetInputs> inputs,
                                             Progress* progress = nullptr,
                                             const Evaluation* earlier = nullptr);

}  // namespace shardlens

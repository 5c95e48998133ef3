#pragma once
// What a framework does to a simulated evaluation beyond its matrices: an Accelerate loop
// whose ranks run different step counts hangs in its per-step gather, and one whose last
// batches differ in size fails there unless it pads them, so neither reports anything;
// several validations in one epoch see the same subset.
#include <vector>

#include "core/evaluation/evaluation.h"

namespace shardlens {

// Accelerate's even_batches=False with a per-step gather: ranks with different step counts
// (the gather hangs: uneven-steps) or, unpadded (Scenario::pad_across_processes off), last
// batches of different sizes (the gather fails: unequal-last-batches) remove the synced
// matrix and diagnose that. No-op otherwise. (Lightning's wrapper is told apart by the
// diagnosis itself, for runs and simulations alike.)
void report_framework_hazards(Evaluation& e);

// The validations of one epoch (Lightning's val_check_interval under DDP): when they all
// evaluated the same records and that subset misses samples, each gets a
// repeated-validation-subset finding.
void mark_repeated_validations(std::vector<Evaluation>& validations);

}  // namespace shardlens

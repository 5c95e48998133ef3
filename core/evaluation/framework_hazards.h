#pragma once
// What a framework does to a simulated evaluation beyond its matrices: an Accelerate loop
// whose ranks run different step counts hangs in its per-step gather, so it reports nothing;
// several validations in one epoch see the same subset.
#include <vector>

#include "core/evaluation/evaluation.h"

namespace shardlens {

// Accelerate's even_batches=False with uneven ranks and a per-step gather: removes the
// synced matrix (the real loop hangs) and diagnoses uneven-steps. No-op otherwise. (Lightning's
// wrapper is told apart by the diagnosis itself, for runs and simulations alike.)
void report_framework_hazards(Evaluation& e);

// The validations of one epoch (Lightning's val_check_interval under DDP): when they all
// evaluated the same records and that subset misses samples, each gets a
// repeated-validation-subset finding.
void mark_repeated_validations(std::vector<Evaluation>& validations);

}  // namespace shardlens

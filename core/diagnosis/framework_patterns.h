#pragma once
// The patterns of Hugging Face Accelerate and Lightning's wrapped samplers: the refinement of
// the generic findings once the sampler is known (their words: catalogue_frameworks.cpp).
#include <string>
#include <vector>

#include "core/diagnosis/diagnosis.h"

namespace shardlens {

// Called by diagnose() once the generic findings are made: with Accelerate's sampler the
// counted padding is its cycled even_batches padding (plain-gather-padding), and with
// Lightning's DistributedSamplerWrapper an overlap comes from every rank drawing its own list
// of the wrapped sampler (wrapper-overlap). Padding of W or more records can only be
// Accelerate's (a DistributedSampler pads fewer than W).
void classify_framework_patterns(const DiagnosisInput& in, Diagnosis& out);

// What an Accelerate loop with even_batches=False and an unpadded per-step gather runs into:
// the ranks run different step counts (the gather hangs: uneven-steps), or the same steps
// with last batches of different sizes (the gather fails: unequal-last-batches). Either way
// nothing is reported.
struct StepHazard {
  Pattern pattern = Pattern::UnevenSteps;
  std::vector<int64_t> steps;       // each rank's step count
  std::vector<int64_t> samples;     // each rank's sample count
  std::vector<int64_t> last_batch;  // each rank's last batch
  std::string sync;                 // the per-step collective
};

Diagnosis diagnose_step_hazard(const RecordSource& records,
                               const std::vector<int64_t>& class_counts,
                               const Coverage& times_evaluated, const StepHazard& hazard);

}  // namespace shardlens

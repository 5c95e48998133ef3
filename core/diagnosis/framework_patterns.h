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

// The diagnosis of an Accelerate loop whose ranks run different step counts
// (even_batches=False) with a per-step gather: it would hang, so nothing is reported.
// `steps` holds each rank's step count, `sizes` its sample count.
Diagnosis diagnose_uneven_steps(const RecordSource& records,
                                const std::vector<int64_t>& class_counts,
                                const Coverage& times_evaluated, const std::vector<int64_t>& steps,
                                const std::vector<int64_t>& sizes, const std::string& sync);

}  // namespace shardlens

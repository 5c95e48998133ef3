#include "core/evaluation/framework_hazards.h"

#include "core/diagnosis/framework_patterns.h"
#include "core/torchsem/sync.h"

namespace shardlens {

namespace {

std::string join_counts(const std::vector<int64_t>& values) {
  std::string out;
  for (int64_t v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

}  // namespace

void report_framework_hazards(Evaluation& e) {
  if (!e.plan || !e.synced || e.scenario().sampler.kind != SamplerKind::Accelerate) return;
  if (!per_step_collective(e.scenario().sync)) return;
  const StepLayout layout = step_layout(*e.plan);
  StepHazard hazard;
  hazard.sync = to_string(e.scenario().sync);
  if (layout.different_steps()) {
    hazard.pattern = Pattern::UnevenSteps;
    e.synced_missing = "the ranks run different step counts (" + join_counts(layout.steps) +
                       ", even_batches=False), so the per-step " + hazard.sync + " would hang";
  } else if (layout.unequal_last_batches() && !e.scenario().pad_across_processes) {
    hazard.pattern = Pattern::UnequalLastBatches;
    e.synced_missing = "the last batches differ in size (" + join_counts(layout.last_batch) +
                       " samples, even_batches=False): the " + hazard.sync +
                       " fails on unequal sizes (pad_across_processes first, or even_batches)";
  } else {
    return;  // even steps, or unequal last batches padded: the gather runs (synced as is)
  }
  hazard.steps = layout.steps;
  hazard.last_batch = layout.last_batch;
  for (const EvaluatedRank& r : e.plan->evaluated) hazard.samples.push_back(r.sequence.size());
  e.synced.reset();
  e.row_check = check_evaluation_rows(e);  // what the ranks counted, no longer the dropped sync
  e.diagnosis = diagnose_step_hazard(*e.records, e.meta.class_counts, e.times_evaluated, hazard);
}

namespace {

bool same_records(const RecordSource& a, const RecordSource& b) {
  if (a.world_size() != b.world_size()) return false;
  for (int r = 0; r < a.world_size(); ++r) {
    if (a.rank_size(r) != b.rank_size(r)) return false;
    std::vector<int64_t> ia;
    for_each_record(a, r, [&](const Record& rec) { ia.push_back(rec.index); });
    size_t k = 0;
    bool same = true;
    for_each_record(b, r, [&](const Record& rec) { same = same && ia[k++] == rec.index; });
    if (!same) return false;
  }
  return true;
}

}  // namespace

void mark_repeated_validations(std::vector<Evaluation>& validations) {
  if (validations.size() < 2) return;
  const Evaluation& first = validations.front();
  if (first.diagnosis.missing_samples == 0) return;
  for (const Evaluation& v : validations) {
    if (!v.records || !same_records(*first.records, *v.records)) return;
  }
  for (size_t k = 0; k < validations.size(); ++k) {
    Evaluation& v = validations[k];
    Finding f(Pattern::RepeatedValidationSubset);
    f.facts.validations = int64_t(validations.size());
    f.facts.epoch = v.epoch();
    f.facts.distinct_evaluated = v.diagnosis.distinct_evaluated;
    f.facts.missing = v.diagnosis.missing_samples;
    f.sample_count = v.diagnosis.missing_samples;
    v.diagnosis.correct = false;
    v.diagnosis.findings.push_back(std::move(f));
  }
}

}  // namespace shardlens

#include "core/diagnosis/framework_patterns.h"

#include <algorithm>

namespace shardlens {

namespace {

bool has(const Diagnosis& d, Pattern p) {
  return std::any_of(d.findings.begin(), d.findings.end(),
                     [&](const Finding& f) { return f.pattern == p; });
}

// Replaces a generic finding by the framework's own, keeping its samples and classes and the
// run's numbers (the sentence before the generic explanation).
void refine(Diagnosis& d, Pattern from, Pattern to, const std::string& specifics) {
  for (Finding& f : d.findings) {
    if (f.pattern != from) continue;
    const std::string generic = describe_pattern(from).explanation;
    std::string numbers = f.explanation;
    if (numbers.size() >= generic.size() &&
        numbers.compare(numbers.size() - generic.size(), generic.size(), generic) == 0) {
      numbers.resize(numbers.size() - generic.size());
    }
    Finding g = describe_pattern(to);
    g.explanation = numbers + specifics + (specifics.empty() ? "" : " ") + g.explanation;
    g.classes = f.classes;
    g.samples = f.samples;
    g.sample_count = f.sample_count;
    f = std::move(g);
  }
}

bool any_sanity_record(const RecordSource& records) {
  for (int r = 0; r < records.world_size(); ++r) {
    const bool clean = walk_records(
        records, r, [](const Record& rec, int64_t) { return (rec.flags & kSanity) == 0; });
    if (!clean) return true;
  }
  return false;
}

// A rank that evaluates a sample twice without a sanity check: Accelerate's cycled padding
// can land on the rank that had the sample, and a sampler with replacement draws it twice.
// Neither is a sanity leak.
void drop_within_rank_sanity_leak(const DiagnosisInput& in, Diagnosis& d) {
  if (!has(d, Pattern::SanityLeak) || !in.records || any_sanity_record(*in.records)) return;
  std::erase_if(d.findings, [](const Finding& f) { return f.pattern == Pattern::SanityLeak; });
}

}  // namespace

Finding describe_framework_pattern(Finding f) {
  switch (f.pattern) {
    case Pattern::PlainGatherPadding:
      f.title = "Accelerate's cycled padding counted";
      f.explanation =
          "Accelerate's BatchSamplerShard (even_batches=True, the default) completes the last "
          "round of batches with samples from the start of the order, so every rank runs the "
          "same number of steps; a plain accelerator.gather (or an all-reduce of per-rank "
          "states) counts those copies, so the dataset size is rounded up to a multiple of "
          "batch_size x world_size (25,000 samples counted as 25,600 on 4 GPUs).";
      f.fixes = {{"Accelerate",
                  "Use accelerator.gather_for_metrics(...) instead of gather(...): it drops the "
                  "cycled samples of the last step."},
                 {"HF Trainer",
                  "Let the Trainer's own evaluation loop gather (it uses gather_for_metrics in "
                  "current transformers); a custom loop or compute_metrics must not gather "
                  "the predictions again with a plain gather."},
                 {"torchmetrics",
                  "A metric updated on every rank counts the cycled samples too: update it with "
                  "the gather_for_metrics output on one process, or make the dataset a multiple "
                  "of batch_size x world_size."}};
      break;
    case Pattern::UnevenSteps:
      f.title = "Ranks run different step counts: the gather hangs";
      f.explanation =
          "With even_batches=False, Accelerate deals the loader's batches round-robin without "
          "completing the last round, so some ranks run one step more (or a shorter last "
          "batch) than others. A collective called at every step (gather, gather_for_metrics) "
          "then waits for ranks that have finished: the real run hangs until its timeout, and "
          "no matrix is reported.";
      f.fixes = {{"Accelerate",
                  "Keep even_batches=True (the default) with gather_for_metrics, or wrap the "
                  "loop in accelerator.join_uneven_inputs([model], even_batches=...)."},
                 {"torchmetrics",
                  "Update a metric on each rank and sync once at compute() (one all_gather of "
                  "every rank's state, summed locally, which every rank reaches): uneven "
                  "shards are then counted exactly once."}};
      break;
    case Pattern::WrapperOverlap:
      f.title = "Lightning's sampler wrapper: every rank drew its own list";
      f.explanation =
          "Lightning wraps a custom sampler in DistributedSamplerWrapper: each rank calls "
          "list(sampler) itself and keeps positions rank, rank + W, ... of its own list. A "
          "random sampler (e.g. WeightedRandomSampler) whose generator is not seeded alike on "
          "every rank gives each rank a different list, so the shards overlap: some samples "
          "are counted twice, others never (a sampler drawing with replacement also repeats "
          "samples on "
          "one process: the reported counts are then those of a resampled set).";
      f.fixes = {{"Lightning",
                  "Give the sampler a generator seeded the same on every rank "
                  "(torch.Generator().manual_seed(seed)), or evaluate with the plain dataset "
                  "order (no custom sampler) so Lightning injects a DistributedSampler."},
                 {"PyTorch",
                  "Shard the index list yourself after drawing it once (rank 0 draws, broadcast "
                  "it), then take positions rank::world_size."}};
      break;
    case Pattern::RepeatedValidationSubset:
      f.title = "Every validation of the epoch saw the same subset";
      f.explanation =
          "With several validations per epoch (val_check_interval) and a batch limit under "
          "DDP, the DistributedSampler is seeded with seed + epoch, so every validation of one "
          "epoch evaluates the same limited subset (Lightning issue 17843); the samples outside "
          "it are never seen during the epoch.";
      f.fixes = {{"Lightning",
                  "Validate on the full set (limit_val_batches=1.0), or reshuffle per "
                  "validation with a sampler whose set_epoch you call with a validation "
                  "counter; one validation per epoch makes the limit's subset explicit."}};
      break;
    case Pattern::AccelerateDoubleShard:
      f.title = "Accelerate sharded a DistributedSampler's shard again";
      f.explanation =
          "The loader given to accelerator.prepare() already had a DistributedSampler. "
          "Accelerate wraps its batch sampler in BatchSamplerShard all the same (it makes no "
          "exception for it), so each rank keeps batches rank, rank + W, ... of its own "
          "shard: about 1/W of the dataset is evaluated in all (128 of 510 samples on 4 "
          "ranks with batches of 16), and gather_for_metrics, which trims the last step to "
          "len(dataset) % (batch_size x W), can drop real samples too.";
      f.fixes = {{"Accelerate",
                  "Give accelerator.prepare() the plain DataLoader (shuffle=... and no "
                  "sampler): Accelerate shards it once. Or keep the DistributedSampler and do "
                  "not prepare the evaluation loader (then gather with torch.distributed)."}};
      break;
    default:
      break;
  }
  return f;
}

void classify_framework_patterns(const DiagnosisInput& in, Diagnosis& out) {
  const int w = in.per_rank ? static_cast<int>(in.per_rank->size()) : 1;
  if (has(out, Pattern::PaddingDuplicates)) {
    int64_t padding = 0;
    for (const Finding& f : out.findings)
      if (f.pattern == Pattern::PaddingDuplicates) padding = std::max(padding, f.sample_count);
    const bool accelerate = in.sampler ? *in.sampler == SamplerKind::Accelerate : padding >= w;
    if (accelerate) {
      refine(out, Pattern::PaddingDuplicates, Pattern::PlainGatherPadding, "");
      drop_within_rank_sanity_leak(in, out);
    }
  }
  // A DistributedSampler sharded again leaves most samples unseen with no batch limit: the
  // missing samples are the double sharding's (gather_for_metrics' trim, if any, stays).
  if (in.sampler && *in.sampler == SamplerKind::Accelerate && in.accelerate_input &&
      *in.accelerate_input == AccelerateInput::DistributedSampler) {
    refine(out, Pattern::BatchLimitSubset, Pattern::AccelerateDoubleShard, "");
  }
  if (in.sampler && *in.sampler == SamplerKind::LightningWrapper) {
    drop_within_rank_sanity_leak(in, out);
    if (has(out, Pattern::RankOverlap))
      refine(out, Pattern::RankOverlap, Pattern::WrapperOverlap, "");
  }
}

Diagnosis diagnose_uneven_steps(const RecordSource& records,
                                const std::vector<int64_t>& class_counts,
                                const std::vector<uint8_t>& times_evaluated,
                                const std::vector<int64_t>& steps,
                                const std::vector<int64_t>& sizes, const std::string& sync) {
  Diagnosis d = diagnose_incomplete(records, class_counts, times_evaluated, "uneven steps");
  d.findings.clear();
  std::string per_rank;
  for (size_t r = 0; r < steps.size(); ++r) {
    per_rank += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + ": " +
                std::to_string(steps[r]) + " steps (" + std::to_string(sizes[r]) + " samples)";
  }
  Finding f = describe_pattern(Pattern::UnevenSteps);
  f.explanation = "The ranks run different steps (" + per_rank + "), so the per-step " + sync +
                  " would hang. " + f.explanation;
  d.findings.push_back(std::move(f));
  return d;
}

}  // namespace shardlens

// The pitfall catalogue: title, explanation and fixes of every pattern.
#include <map>

#include "core/diagnosis/diagnosis.h"
#include "core/diagnosis/framework_patterns.h"

namespace shardlens {

namespace {

struct Entry {
  std::string title;
  std::string explanation;
  std::vector<Fix> fixes;
};

const std::map<Pattern, Entry>& catalogue() {
  static const std::map<Pattern, Entry> entries = {
      {Pattern::PaddingDuplicates,
       {"Padding duplicates",
        "DistributedSampler pads the index list so every rank gets the same number of samples "
        "when the dataset size is not a multiple of the world size. The padding repeats the "
        "first samples of the order, so their classes are counted twice.",
        {{"PyTorch",
          "Drop records flagged as padding, or evaluate with a sampler that does not "
          "pad (e.g. Lightning's UnrepeatedDistributedSampler) and gather uneven results."},
         {"Lightning",
          "Make len(dataset) divisible by devices, or run the final evaluation on one "
          "device (Trainer(devices=1)); Lightning warns about this for test/validate."},
         {"torchmetrics",
          "torchmetrics cannot see padding, and a duplicate may sit on another rank than its "
          "original, so no per-rank de-duplication before update() removes it: gather the "
          "predictions with their dataset indices and drop the padding positions (the last "
          "total_size - len(dataset) of the sampler's order) before computing, or use an "
          "uneven sampler."},
         {"Accelerate",
          "Use gather_for_metrics with Accelerate's own dataloader (it trims the padding)."}}}},
      {Pattern::SamplerDropLast,
       {"Samples dropped by the sampler",
        "DistributedSampler(drop_last=True) cuts the index list to a multiple of the world size, "
        "so up to world_size - 1 samples are never evaluated.",
        {{"PyTorch",
          "drop_last=False alone pads with duplicates instead (510 samples become 512): "
          "evaluate with a sampler that neither drops nor pads (an uneven one such as "
          "Lightning's UnrepeatedDistributedSampler) or make len(dataset) divisible by the "
          "world size."},
         {"Lightning",
          "Remove the custom sampler; Lightning's own pads instead of dropping, so for the "
          "numbers you report make len(dataset) divisible by devices or evaluate on one "
          "device."}}}},
      {Pattern::LoaderDropLast,
       {"Partial last batches dropped by the loader",
        "DataLoader(drop_last=True) discards each rank's partial last batch: up to "
        "world_size * (batch_size - 1) samples are never evaluated.",
        {{"PyTorch", "Use drop_last=False on evaluation DataLoaders."},
         {"Lightning", "Return val/test loaders with drop_last=False."}}}},
      {Pattern::BatchLimitSubset,
       {"Batch limit evaluates a subset",
        "A batch limit (limit_val_batches / limit_test_batches) stops each rank after a number of "
        "batches, so only part of the dataset is evaluated and the rows cannot match the class "
        "counts.",
        {{"Lightning",
          "Set limit_val_batches=1.0 (the float) for the evaluation you report; note "
          "that 1 (the int) means one batch."},
         {"PyTorch", "Do not break out of the evaluation loop early."}}}},
      {Pattern::ShuffledEval,
       {"Shuffled evaluation order",
        "The evaluation loader shuffles, and set_epoch changes the order every epoch: which "
        "samples "
        "fall inside the batch limit or get padded changes from epoch to epoch, so the rows drift "
        "while the total stays constant.",
        {{"Lightning", "Use shuffle=False for val/test loaders (Lightning only warns)."},
         {"PyTorch", "DistributedSampler(shuffle=False) for evaluation."}}}},
      {Pattern::RankOverlap,
       {"Ranks evaluate overlapping shards",
        "Ranks used different seeds or datasets, so their shards overlap: some samples are "
        "evaluated by several ranks and others by none. The total can be right while rows are "
        "wrong.",
        {{"PyTorch",
          "Give DistributedSampler the same seed on every rank (seed_everything before "
          "building loaders) and call set_epoch with the same epoch."},
         {"Lightning",
          "Call seed_everything(seed, workers=True) identically on all ranks; do not "
          "seed with the rank."}}}},
      {Pattern::NoDistributedSampler,
       {"No distributed sampler",
        "Every rank iterated the whole dataset (use_distributed_sampler=False or a custom "
        "non-distributed sampler), so the synced matrix is world_size times the truth.",
        {{"Lightning", "Keep use_distributed_sampler=True (replace_sampler_ddp before 2.0)."},
         {"PyTorch", "Wrap the dataset in DistributedSampler(dataset, num_replicas, rank)."}}}},
      {Pattern::Unsynced,
       {"Not synchronized",
        "The reported matrix is one rank's local state: the other ranks' counts were never "
        "summed in (sync_on_compute=False, reading metric state directly, or logging on rank "
        "zero only).",
        {{"torchmetrics", "Keep sync_on_compute=True and read the result of compute()."},
         {"Lightning", "Log the metric object (self.log(name, metric)) or use sync_dist=True."},
         {"PyTorch", "dist.all_reduce(matrix, op=SUM) before reading it."}}}},
      {Pattern::DoubleSync,
       {"Synchronized twice",
        "An already-synchronized matrix was summed over ranks again (an all_reduce after "
        "compute(), or a sum-reduced log of a synced value): every count is world_size times "
        "too large.",
        {{"torchmetrics", "compute() already syncs; do not all_reduce its result."},
         {"Lightning", "Do not pass sync_dist=True (sum) for a value that is already synced."}}}},
      {Pattern::GatherZeroPad,
       {"Zero padding kept after a gather",
        "Uneven per-rank prediction tensors were padded with zeros for all_gather and not "
        "trimmed, so every padded slot counts as a (target 0, prediction 0) pair: row 0 and "
        "column 0 are inflated.",
        {{"PyTorch",
          "Gather the per-rank lengths first and trim each gathered tensor, or use "
          "all_gather_object."},
         {"torchmetrics", "Let the metric sync its sum state instead of gathering predictions."}}}},
      {Pattern::CounterPrecision,
       {"Counter precision rounds counts",
        "The counts are kept in a low-precision float (float16 is exact up to 2048, bfloat16 "
        "up to 256, float32 up to 16,777,216). Past that, adding a batch rounds to the nearest "
        "representable value, up or down: cells stall below their true count or land above it, and "
        "rows fall short or overshoot.",
        {{"torchmetrics",
          "Keep confusion-matrix states in int64 (the default); do not call .half() "
          "on the metric."},
         {"Lightning",
          "precision='16-mixed' does not change metric states; a custom float16 "
          "buffer does: register counters as torch.long."}}}},
      {Pattern::NormalizeThenSum,
       {"Normalized per rank, then summed",
        "Each rank normalized its own matrix before the sum, so each row sums to the number of "
        "ranks instead of 1 and ranks are weighted equally whatever their sample counts.",
        {{"torchmetrics", "Sum the raw counts first, normalize once after compute()."}}}},
      {Pattern::IgnoredTargets,
       {"Targets ignored",
        "Samples of some classes were dropped before counting (ignore_index, or targets outside "
        "[0, num_classes)), so those rows are short.",
        {{"torchmetrics", "Check ignore_index: it must not be a real class."},
         {"PyTorch", "Validate targets against num_classes before updating the metric."}}}},
      {Pattern::SanityLeak,
       {"Sanity-check batches counted",
        "The sanity-check batches evaluated before epoch 0 were not reset out of the metric, so "
        "the first batches of each rank are counted twice.",
        {{"Lightning",
          "Reset the metric in on_validation_epoch_start or log the metric object "
          "(Lightning resets it); or num_sanity_val_steps=0."}}}},
      {Pattern::GatherForMetricsMismatch,
       {"gather_for_metrics trimmed the wrong samples",
        "Accelerate's gather_for_metrics keeps only the first len(dataset) % (batch_size x W) "
        "items of the last gathered step, which is right when Accelerate alone sharded the "
        "loader (its cycled padding sits there). A loader that was sharded otherwise (in "
        "Accelerate: one that already had a DistributedSampler when it was prepared) has "
        "real samples there: they were trimmed, and any padding elsewhere was kept.",
        {{"Accelerate",
          "Give accelerator.prepare() the plain DataLoader (no DistributedSampler), so "
          "Accelerate shards it once and its padding sits where gather_for_metrics trims it."}}}},
      {Pattern::IncompleteRun,
       {"Incomplete run: nothing was synchronized",
        "The run ended before its sync, so there is no reported matrix to check. The per-rank "
        "matrices and records show what each rank had counted when it stopped.",
        {{"PyTorch",
          "Rerun; if the same rank fails again, read its log. A collective that times out on a "
          "slow rank needs a longer --timeout (init_process_group's timeout)."}}}},
      {Pattern::NothingRecorded,
       {"Nothing was recorded",
        "The evaluation holds no records: no rank recorded a single sample, so there is "
        "nothing to check. An empty matrix that matches an empty expectation proves nothing about "
        "the run.",
        {{"Lightning",
          "Return a dict with the batch's dataset indices, targets and predictions from "
          "validation_step (or tell ShardLensCallback the keys your step returns), and check "
          "that limit_val_batches is not 0."},
         {"PyTorch", "Record every evaluated batch (index, target, prediction) on every rank."}}}},
      {Pattern::UnexplainedDifference,
       {"Unexplained difference",
        "The reported matrix differs from the expected one in a way none of the known patterns "
        "explains.",
        {{"ShardLens", "Inspect the difference view and the per-rank records."}}}},
  };
  return entries;
}

}  // namespace

const char* pattern_id(Pattern p) {
  switch (p) {
    case Pattern::PaddingDuplicates:
      return "padding-duplicates";
    case Pattern::SamplerDropLast:
      return "sampler-drop-last";
    case Pattern::LoaderDropLast:
      return "loader-drop-last";
    case Pattern::BatchLimitSubset:
      return "batch-limit-subset";
    case Pattern::ShuffledEval:
      return "shuffled-eval";
    case Pattern::RankOverlap:
      return "rank-overlap";
    case Pattern::NoDistributedSampler:
      return "no-distributed-sampler";
    case Pattern::Unsynced:
      return "unsynced";
    case Pattern::DoubleSync:
      return "double-sync";
    case Pattern::GatherZeroPad:
      return "gather-zero-pad";
    case Pattern::CounterPrecision:
      return "counter-precision";
    case Pattern::NormalizeThenSum:
      return "normalize-then-sum";
    case Pattern::IgnoredTargets:
      return "ignored-targets";
    case Pattern::SanityLeak:
      return "sanity-leak";
    case Pattern::GatherForMetricsMismatch:
      return "gather-for-metrics-mismatch";
    case Pattern::IncompleteRun:
      return "incomplete-run";
    case Pattern::PlainGatherPadding:
      return "plain-gather-padding";
    case Pattern::UnevenSteps:
      return "uneven-steps";
    case Pattern::WrapperOverlap:
      return "wrapper-overlap";
    case Pattern::RepeatedValidationSubset:
      return "repeated-validation-subset";
    case Pattern::SamplerWithReplacement:
      return "sampler-with-replacement";
    case Pattern::NothingRecorded:
      return "nothing-recorded";
    case Pattern::AccelerateDoubleShard:
      return "accelerate-double-shard";
    case Pattern::UnexplainedDifference:
      return "unexplained-difference";
  }
  return "unexplained-difference";
}

std::optional<Pattern> pattern_from_id(std::string_view id) {
  for (Pattern p : all_patterns())
    if (id == pattern_id(p)) return p;
  return std::nullopt;
}

const std::vector<Pattern>& all_patterns() {
  static const std::vector<Pattern> all = [] {
    std::vector<Pattern> out;
    for (int k = 0; k <= int(Pattern::UnexplainedDifference); ++k) out.push_back(Pattern(k));
    return out;
  }();
  return all;
}

Finding describe_pattern(Pattern pattern) {
  Finding f;
  f.pattern = pattern;
  auto it = catalogue().find(pattern);
  if (it == catalogue().end()) return describe_framework_pattern(f);
  f.title = it->second.title;
  f.explanation = it->second.explanation;
  f.fixes = it->second.fixes;
  return f;
}

}  // namespace shardlens

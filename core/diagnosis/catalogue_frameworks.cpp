// The catalogue's framework patterns: Hugging Face Accelerate's sharding and gathers, and
// Lightning's wrapped samplers and repeated validations.
#include "core/diagnosis/catalogue_entry.h"
#include "core/diagnosis/wording.h"

namespace shardlens::detail {

namespace {

// This evaluation's rounding, when its size and padding are known.
std::string cycled_padding_example(const Facts& f) {
  const int64_t padding = f.padding_records.value_or(f.tail_repeats.value_or(0));
  if (!f.dataset_size || !f.world_size || padding == 0) return "";
  return " (" + std::to_string(*f.dataset_size) + " samples counted as " +
         std::to_string(*f.dataset_size + padding) + " on " + std::to_string(*f.world_size) +
         " ranks)";
}

FindingText plain_gather_padding(const Facts& f) {
  return {"Accelerate's cycled padding counted",
          explained(padding_sentence(f),
                    "Accelerate's BatchSamplerShard (even_batches=True, the default) completes "
                    "the last round of batches with samples from the start of the order, so "
                    "every rank runs the same number of steps; a plain accelerator.gather (or an "
                    "all-reduce of per-rank states) counts those copies, so the dataset size is "
                    "rounded up to a multiple of batch_size x world_size" +
                        cycled_padding_example(f) + "."),
          {{"Accelerate",
            "Use accelerator.gather_for_metrics(...) instead of gather(...): it drops the "
            "cycled samples of the last step."},
           {"HF Trainer",
            "Let the Trainer's own evaluation loop gather (it uses gather_for_metrics in "
            "current transformers); a custom loop or compute_metrics must not gather "
            "the predictions again with a plain gather."},
           {"torchmetrics",
            "A metric updated on every rank counts the cycled samples too: update it with "
            "the gather_for_metrics output on one process, or make the dataset a multiple "
            "of batch_size x world_size."}}};
}

// "rank 0: 8 steps (256 samples), rank 1: ...": each rank's steps, samples and last batch, as
// far as the facts hold them.
std::string per_rank_steps(const Facts& f) {
  std::string out;
  for (size_t r = 0; r < f.rank_steps.size(); ++r) {
    out += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + ": " +
           std::to_string(f.rank_steps[r]) + " steps";
    std::string inside;
    if (r < f.rank_samples.size()) inside = std::to_string(f.rank_samples[r]) + " samples";
    if (r < f.rank_last_batch.size())
      inside += (inside.empty() ? "" : ", ") + std::string("last batch ") +
                std::to_string(f.rank_last_batch[r]);
    if (!inside.empty()) out += " (" + inside + ")";
  }
  return out;
}

Fix torchmetrics_once() {
  return {"torchmetrics",
          "Update a metric on each rank and sync once at compute() (one all_gather of every "
          "rank's state, summed locally, which every rank reaches): uneven shards are then "
          "counted exactly once."};
}

std::string uneven_steps_specifics(const Facts& f) {
  if (f.rank_steps.empty()) return "";
  return "The ranks run different step counts (" + per_rank_steps(f) + "), so the per-step " +
         f.sync.value_or("collective") + " would hang.";
}

FindingText uneven_steps(const Facts& f) {
  return {"Ranks run different step counts: the gather hangs",
          explained(uneven_steps_specifics(f),
                    "With even_batches=False, Accelerate deals the loader's batches round-robin "
                    "without completing the last round, so when the batches do not divide "
                    "evenly among the ranks some ranks run one step more than others. A "
                    "collective called at every step (gather, gather_for_metrics) then waits "
                    "for ranks that have finished: the real run hangs until its timeout, and "
                    "no matrix is reported."),
          {{"Accelerate",
            "Keep even_batches=True (the default) with gather_for_metrics, or wrap the "
            "loop in accelerator.join_uneven_inputs([model], even_batches=...)."},
           torchmetrics_once()}};
}

std::string unequal_last_batches_specifics(const Facts& f) {
  if (f.rank_steps.empty()) return "";
  return "Every rank runs " + std::to_string(f.rank_steps.front()) +
         " steps but the last batches differ in size (" + per_rank_steps(f) +
         "), so the last step's " + f.sync.value_or("gather") +
         " is given tensors of unequal sizes and fails.";
}

FindingText unequal_last_batches(const Facts& f) {
  return {"The last batches differ in size: the gather fails",
          explained(unequal_last_batches_specifics(f),
                    "With even_batches=False, Accelerate deals the loader's batches round-robin "
                    "without completing the last round. When the batches divide evenly among "
                    "the ranks, every rank runs the same steps, but the rank holding the "
                    "loader's short last batch (or, with split_batches, the short slices of "
                    "the last batch) has fewer rows at the last step. accelerator.gather, and "
                    "so gather_for_metrics, all_gathers tensors that must have the same size on "
                    "every rank: on gloo it fails (\"op.preamble.length <= op.nbytes\"), and "
                    "no matrix is reported."),
          {{"Accelerate",
            "Pad before gathering: accelerator.pad_across_processes(t, dim=0) on the "
            "predictions, targets (and index), then gather_for_metrics, whose truncation of "
            "the last step to len(dataset) % (batch_size x W) rows drops the padded ones "
            "(--pad-across-processes simulates it); or keep even_batches=True (the default)."},
           torchmetrics_once()}};
}

// Why the ranks' lists of Lightning's wrapper are taken to be one, or not.
std::string lists_reason(const ListFacts& l) {
  switch (l.evidence) {
    case ListEvidence::None:
      return "No padding record or recorded seed_everything tells whether the ranks listed the "
             "same draw.";
    case ListEvidence::SimulatedSame:
      return "every simulated rank's order is the same list";
    case ListEvidence::SimulatedApart:
      return "The simulated ranks' generators are seeded differently.";
    case ListEvidence::SeedEverything:
      return "seed_everything(" + std::to_string(l.seed) +
             ") was recorded, which seeds every rank's global generator alike; no padding "
             "record was evaluated to confirm it";
    case ListEvidence::PaddingAgrees:
      return l.padding_checked == 1
                 ? "its padding record repeats the sample another rank evaluated at its "
                   "position of the list"
                 : "each of the " + std::to_string(l.padding_checked) +
                       " padding records repeats the sample another rank evaluated at its "
                       "position of the list";
    case ListEvidence::PaddingDisagrees:
      return "Rank " + std::to_string(l.padding_rank) + "'s padding record repeats sample " +
             std::to_string(l.padding_sample) + " as position " + std::to_string(l.position) +
             " of its list, but rank " + std::to_string(l.other_rank) + " evaluated sample " +
             std::to_string(l.other_sample) + " there: the ranks listed different draws.";
  }
  return "";
}

FindingText wrapper_overlap(const Facts& f) {
  std::string specifics = overlap_sentence(f);
  if (f.lists) specifics = explained(specifics, lists_reason(*f.lists));
  return {"Lightning's sampler wrapper: every rank drew its own list",
          explained(specifics,
                    "Lightning wraps a custom sampler in DistributedSamplerWrapper: each rank "
                    "calls list(sampler) itself and keeps positions rank, rank + W, ... of its "
                    "own list. A random sampler (e.g. WeightedRandomSampler) whose generator is "
                    "not seeded alike on every rank gives each rank a different list, so the "
                    "shards overlap: some samples are counted twice, others never (a sampler "
                    "drawing with replacement also repeats samples on one process: the reported "
                    "counts are then those of a resampled set)."),
          {{"Lightning",
            "Give the sampler a generator seeded the same on every rank "
            "(torch.Generator().manual_seed(seed)), or evaluate with the plain dataset "
            "order (no custom sampler) so Lightning injects a DistributedSampler."},
           {"PyTorch",
            "Shard the index list yourself after drawing it once (rank 0 draws, broadcast "
            "it), then take positions rank::world_size."}}};
}

std::string draw_specifics(const Facts& f) {
  if (!f.draw || !f.lists) return "";
  const DrawFacts& d = *f.draw;
  std::string out =
      (f.world_size ? "All " + std::to_string(*f.world_size) + " ranks" : "The ranks") +
      " took their positions of one list of " + std::to_string(d.draws) + " draws (" +
      lists_reason(*f.lists) + "): it holds " + std::to_string(d.distinct) + " distinct samples, " +
      std::to_string(d.repeated) + " of them drawn more than once";
  if (f.missing) {
    out += ", and " + std::to_string(*f.missing) + " of the ";
    if (f.dataset_size) out += std::to_string(*f.dataset_size) + " ";
    out += std::string("dataset samples were never ") + (d.whole ? "drawn" : "evaluated");
  }
  return out + ".";
}

FindingText sampler_with_replacement(const Facts& f) {
  return {"The evaluation sampler draws with replacement",
          explained(draw_specifics(f),
                    "The sampler of the evaluation loader (a WeightedRandomSampler, whose "
                    "replacement=True is the default) draws samples with replacement: some come "
                    "up several times and others never. That is the sampler's design, not a DDP "
                    "fault: one process iterating it would count the same draws. The rows follow "
                    "the draw, so the expected matrix over the dataset's class counts is not "
                    "what this sampler evaluates."),
          {{"Lightning",
            "To count every sample once, return the validation loader without the "
            "weighted sampler (keep it for training): Lightning then injects a "
            "DistributedSampler. To keep the weighted estimate, seed its generator alike "
            "on every rank (seed_everything, or generator=torch.Generator()"
            ".manual_seed(seed)) and read the matrix against the drawn list."},
           {"PyTorch",
            "WeightedRandomSampler(weights, num_samples, replacement=False) draws each "
            "sample at most once; weight classes in the metric or the loss rather than "
            "by resampling the evaluation set."}}};
}

std::string repeated_validation_specifics(const Facts& f) {
  if (!f.validations) return "";
  std::string out = "All " + std::to_string(*f.validations) + " validations";
  if (f.epoch) out += " of epoch " + std::to_string(*f.epoch);
  out += " evaluated the same ";
  if (f.distinct_evaluated) out += std::to_string(*f.distinct_evaluated) + " ";
  out += "samples";
  if (f.missing) out += "; " + std::to_string(*f.missing) + " were never seen in the epoch";
  return out + ".";
}

FindingText repeated_validation_subset(const Facts& f) {
  return {"Every validation of the epoch saw the same subset",
          explained(repeated_validation_specifics(f),
                    "With several validations per epoch (val_check_interval) and a batch limit "
                    "under DDP, the DistributedSampler is seeded with seed + epoch, so every "
                    "validation of one epoch evaluates the same limited subset (Lightning issue "
                    "17843); the samples outside it are never seen during the epoch."),
          {{"Lightning",
            "Validate on the full set (limit_val_batches=1.0), or reshuffle per "
            "validation with a sampler whose set_epoch you call with a validation "
            "counter; one validation per epoch makes the limit's subset explicit."}}};
}

// This evaluation's share, when its size and the samples left out are known.
std::string double_shard_example(const Facts& f) {
  if (!f.dataset_size || !f.world_size || !f.missing) return "";
  std::string out = " (" + std::to_string(*f.dataset_size - *f.missing) + " of " +
                    std::to_string(*f.dataset_size) + " samples on " +
                    std::to_string(*f.world_size) + " ranks";
  if (f.batch_size) out += " with batches of " + std::to_string(*f.batch_size);
  return out + ")";
}

FindingText accelerate_double_shard(const Facts& f) {
  return {"Accelerate sharded a DistributedSampler's shard again",
          explained(missing_sentence(f),
                    "The loader given to accelerator.prepare() already had a DistributedSampler. "
                    "Accelerate wraps its batch sampler in BatchSamplerShard all the same (it "
                    "makes no exception for it), so each rank keeps batches rank, rank + W, ... "
                    "of its own shard: about 1/W of the dataset is evaluated in all" +
                        double_shard_example(f) +
                        ", and gather_for_metrics, which trims the last step to len(dataset) % "
                        "(batch_size x W), can drop real samples too."),
          {{"Accelerate",
            "Give accelerator.prepare() the plain DataLoader (shuffle=... and no "
            "sampler): Accelerate shards it once. Or keep the DistributedSampler and do "
            "not prepare the evaluation loader (then gather with torch.distributed)."}}};
}

}  // namespace

std::vector<CatalogueEntry> framework_entries() {
  return {
      {Pattern::PlainGatherPadding, "plain-gather-padding", Headline::Wrong, plain_gather_padding},
      {Pattern::UnevenSteps, "uneven-steps", Headline::Hangs, uneven_steps},
      {Pattern::UnequalLastBatches, "unequal-last-batches", Headline::GatherFails,
       unequal_last_batches},
      {Pattern::WrapperOverlap, "wrapper-overlap", Headline::Wrong, wrapper_overlap},
      {Pattern::RepeatedValidationSubset, "repeated-validation-subset", Headline::Wrong,
       repeated_validation_subset},
      {Pattern::SamplerWithReplacement, "sampler-with-replacement", Headline::FollowsTheDraw,
       sampler_with_replacement},
      {Pattern::AccelerateDoubleShard, "accelerate-double-shard", Headline::Wrong,
       accelerate_double_shard},
  };
}

}  // namespace shardlens::detail

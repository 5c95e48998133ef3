// The catalogue's coverage patterns: samples counted twice, never, or in a changing order.
#include <optional>
#include <string>
#include <vector>

#include "core/diagnosis/catalogue_entry.h"
#include "core/diagnosis/wording.h"

namespace shardlens::detail {

namespace {

// What DistributedSampler pads this evaluation's dataset to: known when its size and world
// size are, and only when the size is no multiple of the world size.
std::optional<int64_t> padded_size(const Facts& f) {
  if (!f.dataset_size || !f.world_size || *f.world_size < 1) return std::nullopt;
  const int64_t n = *f.dataset_size, w = *f.world_size;
  if (n % w == 0) return std::nullopt;
  return (n + w - 1) / w * w;
}

FindingText padding_duplicates(const Facts& f) {
  std::string specifics = padding_sentence(f);
  if (!specifics.empty() && padded_size(f))
    specifics += " DistributedSampler pads the " + std::to_string(*f.dataset_size) +
                 " samples to " + std::to_string(*padded_size(f)) + " for " +
                 std::to_string(*f.world_size) + " ranks.";
  return {"Padding duplicates",
          explained(specifics,
                    "DistributedSampler pads the index list so every rank gets the same number of "
                    "samples when the dataset size is not a multiple of the world size. The "
                    "padding repeats the first samples of the order, so their classes are counted "
                    "twice."),
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
            "Use gather_for_metrics with Accelerate's own dataloader (it trims the padding)."},
           {"mmengine",
            "DefaultSampler(round_up=True) pads the same way; collect_results(results, "
            "len(dataset)) cuts the padding only when the metric's process() appends one result "
            "per sample, in sampler order (a result per batch keeps it). Or use "
            "round_up=False."}}};
}

// Records cannot tell a drop from a batch limit that stops at the same sample; say so.
std::string or_a_limit(const Facts& f) {
  if (!f.limit_batches) return "";
  return " A batch limit of " + std::to_string(*f.limit_batches) +
         " batch(es) would cut the same samples: if drop_last is off, look at the limit.";
}

// The PyTorch fix: what drop_last=False would do instead, for this evaluation's size when
// known.
std::string without_drop_last(const Facts& f) {
  const std::string uneven =
      ": evaluate with a sampler that neither drops nor pads (an uneven one such as "
      "Lightning's UnrepeatedDistributedSampler) or make len(dataset) divisible by the world "
      "size.";
  if (!f.dataset_size || !f.world_size || *f.world_size < 1)
    return "drop_last=False alone pads with duplicates instead when len(dataset) is not a "
           "multiple of the world size" +
           uneven;
  if (!padded_size(f))
    return "At this size (" + std::to_string(*f.dataset_size) + " samples on " +
           std::to_string(*f.world_size) +
           " ranks) DistributedSampler neither drops nor pads, drop_last or not: the samples "
           "never evaluated were left out by something else.";
  return "drop_last=False alone pads with duplicates instead (" + std::to_string(*f.dataset_size) +
         " samples become " + std::to_string(*padded_size(f)) + " on " +
         std::to_string(*f.world_size) + " ranks)" + uneven;
}

FindingText sampler_drop_last(const Facts& f) {
  return {"Samples dropped by the sampler",
          explained(missing_sentence(f) + or_a_limit(f),
                    "DistributedSampler(drop_last=True) cuts the index list to a multiple of the "
                    "world size, so up to world_size - 1 samples are never evaluated."),
          {{"PyTorch", without_drop_last(f)},
           {"Lightning",
            "Remove the custom sampler; Lightning's own pads instead of dropping, so for the "
            "numbers you report make len(dataset) divisible by devices or evaluate on one "
            "device."}}};
}

FindingText loader_drop_last(const Facts& f) {
  std::string specifics = missing_sentence(f);
  if (f.batch_size)
    specifics +=
        " Each rank evaluated whole batches of " + std::to_string(*f.batch_size) + " only.";
  return {"Partial last batches dropped by the loader",
          explained(specifics + or_a_limit(f),
                    "DataLoader(drop_last=True) discards each rank's partial last batch: up to "
                    "world_size * (batch_size - 1) samples are never evaluated."),
          {{"PyTorch", "Use drop_last=False on evaluation DataLoaders."},
           {"Lightning", "Return val/test loaders with drop_last=False."}}};
}

FindingText batch_limit_subset(const Facts& f) {
  return {"Batch limit evaluates a subset",
          explained(missing_sentence(f),
                    "A batch limit (limit_val_batches / limit_test_batches) stops each rank after "
                    "a number of batches, so only part of the dataset is evaluated and the rows "
                    "cannot match the class counts."),
          {{"Lightning",
            "Set limit_val_batches=1.0 (the float) for the evaluation you report; note "
            "that 1 (the int) means one batch."},
           {"PyTorch", "Do not break out of the evaluation loop early."}}};
}

// "a, b or c": the causes in a list.
std::string one_of(const std::vector<std::string>& causes) {
  std::string out;
  for (size_t i = 0; i < causes.size(); ++i)
    out += (i == 0 ? "" : i + 1 == causes.size() ? " or " : ", ") + causes[i];
  return out;
}

// What could have stopped every rank before the end of its share: a batch limit and the
// loader's drop_last, each only where the settings do not rule it out.
std::vector<std::string> possible_stops(const Facts& f) {
  std::vector<std::string> out;
  if (f.batch_limited != false) out.push_back("a batch limit");
  if (f.loader_drop_last != false) out.push_back("the loader's drop_last");
  return out;
}

// What could have left the samples out: the stops the settings leave open, or a subset.
std::string possible_causes(const Facts& f) {
  std::vector<std::string> causes = possible_stops(f);
  causes.push_back("a subset of the dataset");
  return one_of(causes);
}

// Where the missing samples lie, as far as the records show it.
std::string where_missing(const Facts& f) {
  std::string out;
  if (f.samples_per_rank)
    out += " Every rank evaluated " + std::to_string(*f.samples_per_rank) + " samples.";
  if (!f.missing_at_end || !f.missing || !f.dataset_size || *f.missing <= 0) return out;
  const std::string range =
      std::to_string(*f.dataset_size - *f.missing) + "-" + std::to_string(*f.dataset_size - 1);
  const std::string stops = one_of(possible_stops(f));
  if (*f.missing_at_end)
    return out + " They are the dataset's last indices (" + range +
           "), which an unshuffled sampler deals last: every rank stopped before the end of its "
           "share" +
           (stops.empty() ? "." : ", as " + stops + " does.");
  return out +
         " They are not the dataset's last indices: with an unshuffled sampler that points to a "
         "subset of the dataset; a shuffled order hides where each rank stopped.";
}

// What would decide between the causes: the settings the recorder keeps, or the missing ids.
std::string where_to_look(const Facts& f) {
  const std::vector<std::string> stops = possible_stops(f);
  const std::string ids =
      stops.empty() ? "look at which sample ids are missing: ids spread over the dataset point "
                      "to a subset."
                    : "look at which sample ids are missing: a trailing block of each rank's "
                      "order points to " +
                          one_of(stops) + ", ids spread over the dataset to a subset.";
  return "Record the run's settings with the recorder (ShardLensCallback, or settings_json "
         "with batch_size, drop_last and limit_batches in the dumps) and import again; or " +
         ids;
}

// Samples missing with no setting to tell why: every cause the records are consistent with,
// and the evidence that would decide, never one cause asserted.
FindingText never_evaluated(const Facts& f) {
  std::string specifics;
  if (f.missing) {
    specifics = counted(*f.missing, "sample") + " never evaluated";
    if (f.dataset_size) specifics += " (of " + std::to_string(*f.dataset_size) + ")";
    specifics += ": consistent with " + possible_causes(f) + "." + where_missing(f);
  }
  const std::string general =
      specifics.empty()
          ? "Some samples were never evaluated, consistent with " + possible_causes(f) +
                ": their rows fall short of the class counts. The records alone cannot tell "
                "which; the run's settings, or which sample ids are missing, decide."
          : "Their rows fall short of the class counts. The records alone cannot tell which "
            "cause it was; the run's settings, or which sample ids are missing, decide.";
  return {"Samples never evaluated",
          explained(specifics, general),
          {{"ShardLens", where_to_look(f)},
           {"Lightning",
            "For the numbers you report, limit_val_batches=1.0 (the float) and loaders with "
            "drop_last=False."},
           {"PyTorch",
            "Use drop_last=False on evaluation DataLoaders and do not break out of the "
            "evaluation loop early."}}};
}

// Which samples the order decides, as far as the facts show: those left out (within a limit
// of batches when one is measured), those padded, or in general whichever are.
std::string what_the_order_decides(const Facts& f) {
  const bool cut = f.missing.value_or(0) > 0;
  const bool padded = f.padding_records.value_or(0) > 0 || f.tail_repeats.value_or(0) > 0;
  std::string left_out = "which samples are left out";
  if (cut && f.limit_batches)
    left_out = "which samples fall inside the batch limit (" + std::to_string(*f.limit_batches) +
               " batch(es) per rank) and which are left out";
  if (cut && padded) return left_out + " or get padded";
  if (cut) return left_out;
  if (padded) return "which samples get padded";
  return "which samples are left out or padded, if any are,";
}

// This evaluation's counts that the order decided: "4 samples left out of 20, 1 padding
// record", or "" when it decided none.
std::string shuffled_counts(const Facts& f) {
  std::string out;
  if (f.missing.value_or(0) > 0) {
    out = counted(*f.missing, "sample") + " left out";
    if (f.dataset_size) out += " of " + std::to_string(*f.dataset_size);
  }
  const int64_t padding = f.padding_records.value_or(f.tail_repeats.value_or(0));
  if (padding > 0) out += (out.empty() ? "" : ", ") + counted(padding, "padding record");
  return out;
}

// The per-epoch claim only where the sampler is known to reshuffle each epoch; one evaluation
// of a run shows one order, not how it changes.
std::string shuffled_specifics(const Facts& f) {
  const std::string counts = shuffled_counts(f);
  if (counts.empty() || f.reshuffled_each_epoch != true) return "";
  return "The evaluation order is shuffled, so the samples behind this evaluation's counts (" +
         counts + ") change every epoch.";
}

std::string shuffled_general(const Facts& f) {
  if (f.reshuffled_each_epoch == true)
    return "The evaluation loader shuffles, and set_epoch changes the order every epoch: " +
           what_the_order_decides(f) +
           " changes from epoch to epoch, so the rows drift while the total stays constant.";
  std::string decides = what_the_order_decides(f);
  if (decides.back() == ',') decides.pop_back();  // "..., if any are," ends a clause
  // The counts once, inside the one sentence that says what the order decided.
  const std::string counts = shuffled_counts(f);
  if (!counts.empty()) decides += " (here " + counts + ")";
  return "The evaluation order is shuffled: it decides " + decides +
         ". A DistributedSampler(shuffle=True) whose set_epoch is called (Lightning calls it) "
         "draws another order every epoch, so the rows would drift while the total stays "
         "constant; one evaluation shows one order only: record several epochs to see whether "
         "this run's changes.";
}

FindingText shuffled_eval(const Facts& f) {
  return {"Shuffled evaluation order",
          explained(shuffled_specifics(f), shuffled_general(f)),
          {{"Lightning", "Use shuffle=False for val/test loaders (Lightning only warns)."},
           {"PyTorch", "DistributedSampler(shuffle=False) for evaluation."}}};
}

FindingText rank_overlap(const Facts& f) {
  return {"Ranks evaluate overlapping shards",
          explained(overlap_sentence(f),
                    "Ranks used different seeds or datasets, so their shards overlap: some "
                    "samples are evaluated by several ranks and others by none. The total can be "
                    "right while rows are wrong."),
          {{"PyTorch",
            "Pass the same seed to DistributedSampler(dataset, seed=SEED) on every rank (never "
            "one derived from the rank) and call sampler.set_epoch(epoch) with the same epoch "
            "on every rank; torch.manual_seed(SEED) on every rank before building the loaders "
            "keeps any other draw alike."},
           {"Lightning",
            "Call seed_everything(seed, workers=True) identically on all ranks; do not "
            "seed with the rank."}}};
}

FindingText no_distributed_sampler(const Facts& f) {
  std::string specifics;
  if (f.world_size && f.samples_per_rank)
    specifics = "All " + std::to_string(*f.world_size) + " ranks evaluated the same " +
                std::to_string(*f.samples_per_rank) + " samples.";
  return {"No distributed sampler",
          explained(specifics,
                    "Every rank iterated the whole dataset (use_distributed_sampler=False or a "
                    "custom non-distributed sampler), so the synced matrix is world_size times "
                    "the truth."),
          {{"Lightning", "Keep use_distributed_sampler=True (replace_sampler_ddp before 2.0)."},
           {"PyTorch", "Wrap the dataset in DistributedSampler(dataset, num_replicas, rank)."}}};
}

FindingText sanity_leak(const Facts& f) {
  std::string specifics;
  if (f.sanity_records)
    specifics = counted(*f.sanity_records, "record", "evaluated in the sanity check") + ".";
  else if (f.repeated_prefix)
    specifics = counted(*f.repeated_prefix, "sample", "evaluated twice by the same rank") +
                ", each rank's first records again right after them.";
  return {"Sanity-check batches counted",
          explained(specifics,
                    "The sanity-check batches evaluated before epoch 0 were not reset out of the "
                    "metric, so the first batches of each rank are counted twice."),
          {{"Lightning",
            "Reset the metric in on_validation_epoch_start or log the metric object "
            "(Lightning resets it); or num_sanity_val_steps=0."}}};
}

FindingText nothing_recorded(const Facts&) {
  return {"Nothing was recorded",
          "The evaluation holds no records: no rank recorded a single sample, so there is "
          "nothing to check. An empty matrix that matches an empty expectation proves nothing "
          "about the run.",
          {{"Lightning",
            "Return a dict with the batch's dataset indices, targets and predictions from "
            "validation_step (or tell ShardLensCallback the keys your step returns), and check "
            "that limit_val_batches is not 0."},
           {"PyTorch", "Record every evaluated batch (index, target, prediction) on every rank."}}};
}

}  // namespace

std::vector<CatalogueEntry> coverage_entries() {
  return {
      {Pattern::PaddingDuplicates, "padding-duplicates", Headline::Wrong, padding_duplicates},
      {Pattern::SamplerDropLast, "sampler-drop-last", Headline::Wrong, sampler_drop_last},
      {Pattern::LoaderDropLast, "loader-drop-last", Headline::Wrong, loader_drop_last},
      {Pattern::BatchLimitSubset, "batch-limit-subset", Headline::Wrong, batch_limit_subset},
      {Pattern::NeverEvaluated, "never-evaluated", Headline::Wrong, never_evaluated},
      {Pattern::ShuffledEval, "shuffled-eval", Headline::Wrong, shuffled_eval},
      {Pattern::RankOverlap, "rank-overlap", Headline::Wrong, rank_overlap},
      {Pattern::NoDistributedSampler, "no-distributed-sampler", Headline::Wrong,
       no_distributed_sampler},
      {Pattern::SanityLeak, "sanity-leak", Headline::Wrong, sanity_leak},
      {Pattern::NothingRecorded, "nothing-recorded", Headline::NothingRecorded, nothing_recorded},
  };
}

}  // namespace shardlens::detail

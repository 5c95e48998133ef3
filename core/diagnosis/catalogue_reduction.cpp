// The catalogue's reduction and counting patterns: the reported matrix against the ranks'
// own, and each rank's counter against its records; plus the runs nothing can be checked of.
#include <iomanip>
#include <sstream>

#include "core/diagnosis/catalogue_entry.h"
#include "core/diagnosis/wording.h"

namespace shardlens::detail {

namespace {

// " (20 of 40 counts)" / " (60 for 40 counts)", when both totals are known
std::string totals(const Facts& f, const char* relation) {
  if (!f.reported_total || !f.rank_sum_total) return "";
  std::string out = " (";  // appended piece by piece: GCC 12 warns wrongly on "(" + string&&
  out += num(*f.reported_total);
  out += relation;
  out += num(*f.rank_sum_total);
  out += " counts)";
  return out;
}

std::string unsynced_specifics(const Facts& f) {
  if (f.reporting_rank && !f.disagreeing_ranks.empty()) {
    std::string list;
    for (int r : f.disagreeing_ranks) list += (list.empty() ? "" : ", ") + std::to_string(r);
    const std::string what =
        f.reported_total ? num(*f.reported_total) + " counts" : std::string("a matrix");
    return "The ranks disagree on the reported matrix: rank " + std::to_string(*f.reporting_rank) +
           " reported " + what + ", rank" + (f.disagreeing_ranks.size() == 1 ? " " : "s ") + list +
           " something else; a synchronized metric reports the same matrix on every rank.";
  }
  if (f.only_rank)
    return "The reported matrix equals rank " + std::to_string(*f.only_rank) + "'s own matrix" +
           totals(f, " of ") + ".";
  if (f.left_out_rank)
    return "The reported matrix is the sum of every rank but rank " +
           std::to_string(*f.left_out_rank) + totals(f, " of ") +
           ": that rank's counts never reached the reduction.";
  return "";
}

FindingText unsynced(const Facts& f) {
  // A sum that left one rank out is no rank's local state: the general words say what it is.
  const std::string general =
      f.left_out_rank
          ? "The reduction left a rank's counts out, so the reported matrix is short of that "
            "rank's samples; a synchronized metric sums every rank's counts."
          : "The reported matrix is one rank's local state: the other ranks' counts were "
            "never summed in (sync_on_compute=False, reading metric state directly, or "
            "logging on rank zero only).";
  return {"Not synchronized",
          explained(unsynced_specifics(f), general),
          {{"torchmetrics", "Keep sync_on_compute=True and read the result of compute()."},
           {"Lightning",
            "Read the matrix from the metric object's compute() (it syncs every rank's counts "
            "when sync_on_compute=True) and log only scalars derived from it; sync_dist=True is "
            "no fix for a confusion matrix: self.log takes scalars, and its mean over the ranks "
            "gives 1/W of the summed counts."},
           {"PyTorch", "dist.all_reduce(matrix, op=SUM) before reading it."}}};
}

FindingText double_sync(const Facts& f) {
  std::string specifics;
  if (f.added_twice_rank)
    specifics = "The reported matrix is the sum over ranks with rank " +
                std::to_string(*f.added_twice_rank) + "'s counts added a second time" +
                totals(f, " for ") + ".";
  else if (f.world_size)
    specifics =
        "Every cell is exactly " + std::to_string(*f.world_size) + " times the sum over ranks.";
  // One rank added again doubles that rank's counts only, not every count.
  const std::string general =
      f.added_twice_rank
          ? "Counts that were already in the sum were summed in again (an all_reduce after "
            "compute(), or a sum-reduced log of a synced value): the counts of the rank added "
            "twice are doubled."
          : "An already-synchronized matrix was summed over ranks again (an all_reduce after "
            "compute(), or a sum-reduced log of a synced value): every count is world_size "
            "times too large.";
  return {"Synchronized twice",
          explained(specifics, general),
          {{"torchmetrics", "compute() already syncs; do not all_reduce its result."},
           {"Lightning", "Do not pass sync_dist=True (sum) for a value that is already synced."}}};
}

FindingText gather_zero_pad(const Facts& f) {
  return {
      "Zero padding kept after a gather",
      explained(f.zero_pairs
                    ? num(*f.zero_pairs) + " extra (0, 0) pairs: the zero padding of uneven rank "
                                           "tensors was counted."
                    : "",
                "Uneven per-rank prediction tensors were padded with zeros for all_gather and "
                "not trimmed, so every padded slot counts as a (target 0, prediction 0) "
                "pair: row 0 and column 0 are inflated."),
      {{"PyTorch",
        "Gather the per-rank lengths first and trim each gathered tensor, or use "
        "all_gather_object."},
       {"torchmetrics", "Let the metric sync its sum state instead of gathering predictions."}}};
}

// "3 cells of the synced matrix differ from ... up or down."
std::string rounded_sentence(const RoundedCells& r) {
  const std::string what = r.synced ? "the synced matrix" : "the ranks' matrices";
  const std::string exact_noun =
      r.synced ? "the exact sum of the ranks' matrices" : "the records' exact count";
  const std::string name = to_string(r.dtype);
  return counted(r.cells, "cell") + " of " + what + " " + (r.cells == 1 ? "differs" : "differ") +
         " from " + exact_noun + " (" + std::to_string(r.too_high) + " too high, " +
         std::to_string(r.too_low) + " too low; largest: " + describe_cell(r.largest, exact_noun) +
         "). Every value is a " + name + " number and every such cell lies past " +
         num(stall_count(r.dtype)) + ", where " + name + " integers are " + num(r.spacing) +
         " apart at " + num(r.largest.observed) +
         ": each addition rounds to the nearest of them, up or down.";
}

FindingText counter_precision(const Facts& f) {
  std::string specifics;
  for (const RoundedCells& r : f.rounded) {
    if (!specifics.empty()) specifics += ' ';
    specifics += rounded_sentence(r);
  }
  return {"Counter precision rounds counts",
          explained(specifics,
                    "The counts are kept in a low-precision float (float16 is exact up to 2048, "
                    "bfloat16 up to 256, float32 up to 16,777,216). Past that, adding a batch "
                    "rounds to the nearest representable value, up or down: cells stall below "
                    "their true count or land above it, and rows fall short or overshoot."),
          {{"torchmetrics",
            "Keep confusion-matrix states in int64 (the default); do not call .half() "
            "on the metric."},
           {"Lightning",
            "precision='16-mixed' does not change metric states; a custom float16 "
            "buffer does: register counters as torch.long."}}};
}

FindingText normalize_then_sum(const Facts& f) {
  return {"Normalized per rank, then summed",
          explained(f.world_size ? "Rows of the reported matrix sum to the number of ranks that "
                                   "saw the class (up to " +
                                       std::to_string(*f.world_size) + "), not to 1."
                                 : "",
                    "Each rank normalized its own matrix before the sum, so each row sums to the "
                    "number of ranks instead of 1 and ranks are weighted equally whatever their "
                    "sample counts."),
          {{"torchmetrics", "Sum the raw counts first, normalize once after compute()."}}};
}

std::string ignored_specifics(const Facts& f) {
  if (!f.ignored_classes) return "";
  std::string what =
      std::to_string(*f.ignored_classes) + " class(es) evaluated but absent from the matrix";
  if (f.ignore_index) what += " (ignore_index=" + std::to_string(*f.ignore_index) + ")";
  if (f.invalid_records)
    what += "; " + std::to_string(*f.invalid_records) + " records out of range";
  return what + ".";
}

FindingText ignored_targets(const Facts& f) {
  return {"Targets ignored",
          explained(ignored_specifics(f),
                    "Samples of some classes were dropped before counting (ignore_index, or "
                    "targets outside [0, num_classes)), so those rows are short."),
          {{"torchmetrics", "Check ignore_index: it must not be a real class."},
           {"PyTorch", "Validate targets against num_classes before updating the metric."}}};
}

FindingText gather_for_metrics_mismatch(const Facts& f) {
  std::string specifics;
  if (f.trimmed && f.padding_kept)
    specifics = num(*f.trimmed) + " records were trimmed from the last gathered batch while " +
                std::to_string(*f.padding_kept) + " padding duplicates were kept.";
  return {"gather_for_metrics trimmed the wrong samples",
          explained(specifics,
                    "Accelerate's gather_for_metrics keeps only the first len(dataset) % "
                    "(batch_size x W) items of the last gathered step, which is right when "
                    "Accelerate alone sharded the loader (its cycled padding sits there). A "
                    "loader that was sharded otherwise (in Accelerate: one that already had a "
                    "DistributedSampler when it was prepared) has real samples there: they were "
                    "trimmed, and any padding elsewhere was kept."),
          {{"Accelerate",
            "Give accelerator.prepare() the plain DataLoader (no DistributedSampler), so "
            "Accelerate shards it once and its padding sits where gather_for_metrics trims "
            "it."}}};
}

// An accuracy as reports print it: 0.6250.
std::string fraction(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(4) << v;
  return s.str();
}

// The metric the run logged: the accuracy unless the facts name the task's ("mIoU", ...).
std::string logged_metric(const Facts& f) {
  return f.logged_metric.value_or("accuracy");
}

bool logged_accuracy_itself(const Facts& f) {
  return logged_metric(f) == "accuracy";
}

std::string logged_specifics(const Facts& f) {
  if (!f.logged_value || !f.true_value) return "";
  const std::string metric = logged_metric(f);
  const std::string where = ", where the " + metric + " is " + fraction(*f.true_value) + ".";
  if (f.logged_per_batch == true)
    return "Logged per batch with sync_dist=True: " + fraction(*f.logged_value) + where;
  std::string out = "Each rank's " + metric + " logged with sync_dist=True averages to " +
                    fraction(*f.logged_value) + where;
  if (f.rank_value_range && !logged_accuracy_itself(f))
    out += " The ranks' own values lie between " + fraction(f.rank_value_range->first) + " and " +
           fraction(f.rank_value_range->second) + ".";
  // A classification's shares, in samples: what weighs the ranks' accuracies unevenly.
  std::string shares;
  for (int64_t n : f.rank_samples) shares += (shares.empty() ? "" : ", ") + std::to_string(n);
  if (logged_accuracy_itself(f) && !shares.empty())
    out += " The ranks evaluated " + shares + " samples.";
  return out;
}

// A metric that is not the mean of per-sample values (an IoU's ratio of summed counts)
// differs from the mean of the ranks' values even over equal shards.
std::string rank_mean_general(const Facts& f) {
  if (logged_accuracy_itself(f))
    return "self.log(name, value, sync_dist=True) averages the ranks' own values with equal "
           "weights: a rank of fewer samples weighs as much as one of more, so with uneven "
           "shards the logged accuracy is not the accuracy of the evaluated samples. The "
           "matrix itself can be right.";
  const std::string metric = logged_metric(f);
  return "The " + metric +
         " computed on each rank's own matrix and logged with self.log(name, value, "
         "sync_dist=True), or averaged by hand, is the mean of the ranks' values: a ratio of "
         "counts summed over the whole dataset is not the mean of its ranks' ratios, even "
         "over equal shards, so the logged value is not the " +
         metric + ". The matrix itself can be right.";
}

std::vector<Fix> logged_fixes(const Facts& f) {
  if (logged_accuracy_itself(f))
    return {{"Lightning",
             "Log a torchmetrics metric object (self.log(\"val_acc\", self.val_acc) with "
             "self.val_acc = MulticlassAccuracy(...)), or sum the hits and the counts across "
             "ranks and divide after the sync."},
            {"torchmetrics",
             "MulticlassAccuracy(average=\"micro\") syncs its counts, not the ranks' ratios."}};
  const std::string metric = logged_metric(f);
  return {{"torchmetrics",
           "Compute the " + metric +
               " once from the synced confusion matrix: keep the metric's state synced "
               "(MulticlassJaccardIndex, MulticlassAccuracy, MulticlassF1Score with "
               "sync_on_compute=True, the default) and log the metric object "
               "(self.log(\"val_metric\", self.val_metric)), not a value computed per rank."},
          {"PyTorch", "dist.all_reduce(confmat, op=dist.ReduceOp.SUM), then compute the " + metric +
                          " from the summed matrix (IoU = tp / (tp + fp + fn) per class)."}};
}

FindingText logged_accuracy(const Facts& f) {
  const std::string general =
      f.logged_per_batch == true
          ? "Lightning's sync_dist averages over the ranks each rank's sum of batch accuracy x "
            "batch size and each rank's sample count, the count's mean truncated in its int64 "
            "tensor: the logged value is not the accuracy unless the records divide by the "
            "world size. The matrix itself can be right."
          : rank_mean_general(f);
  const std::string metric = logged_metric(f);
  return {"Logged " + metric + " is not the " + metric, explained(logged_specifics(f), general),
          logged_fixes(f)};
}

FindingText incomplete_run(const Facts& f) {
  const std::string stopped = f.stopped_by ? " (" + *f.stopped_by + ")" : "";
  return {"Incomplete run: nothing was synchronized",
          "The run ended before its sync" + stopped +
              ", so there is no reported matrix to check. The per-rank matrices and records "
              "show what each rank had counted when it stopped.",
          {{"PyTorch",
            "Rerun; if the same rank fails again, read its log. A collective that times out on "
            "a slow rank needs a longer --timeout (init_process_group's timeout)."}}};
}

FindingText unexplained_difference(const Facts& f) {
  std::string specifics;
  if (f.unexplained_cells && f.first_unexplained)
    specifics = counted(*f.unexplained_cells, "cell") +
                " of the ranks' matrices differ from their records' exact count, which no float "
                "counter's rounding explains (" +
                describe_cell(*f.first_unexplained, "the records' exact count") + ").";
  return {"Unexplained difference",
          explained(specifics,
                    "The reported matrix differs from the expected one in a way none of the known "
                    "patterns explains."),
          {{"ShardLens", "Inspect the difference view and the per-rank records."}}};
}

}  // namespace

std::vector<CatalogueEntry> reduction_entries() {
  return {
      {Pattern::Unsynced, "unsynced", Headline::Wrong, unsynced},
      {Pattern::DoubleSync, "double-sync", Headline::Wrong, double_sync},
      {Pattern::GatherZeroPad, "gather-zero-pad", Headline::Wrong, gather_zero_pad},
      {Pattern::CounterPrecision, "counter-precision", Headline::Wrong, counter_precision},
      {Pattern::NormalizeThenSum, "normalize-then-sum", Headline::Wrong, normalize_then_sum},
      {Pattern::IgnoredTargets, "ignored-targets", Headline::Wrong, ignored_targets},
      {Pattern::GatherForMetricsMismatch, "gather-for-metrics-mismatch", Headline::Wrong,
       gather_for_metrics_mismatch},
      {Pattern::LoggedAccuracy, "logged-accuracy", Headline::Wrong, logged_accuracy},
      {Pattern::IncompleteRun, "incomplete-run", Headline::Wrong, incomplete_run},
      {Pattern::UnexplainedDifference, "unexplained-difference", Headline::Wrong,
       unexplained_difference},
  };
}

}  // namespace shardlens::detail

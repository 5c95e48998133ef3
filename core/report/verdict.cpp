#include "core/report/verdict.h"

#include <algorithm>

#include "core/diagnosis/catalogue.h"

namespace shardlens {

namespace {

// The rank whose own matrix the reported one is, when the diagnosis found that.
std::optional<int> only_rank(const Evaluation& e) {
  for (const Finding& f : e.diagnosis.findings)
    if (f.pattern == Pattern::Unsynced && f.facts.only_rank) return f.facts.only_rank;
  return std::nullopt;
}

bool estimated_counts(const Evaluation& e) {
  return e.meta.class_counts_source != "dataset";
}

std::string plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What the verdict calls the matrix it judges.
std::string judged(const Evaluation& e) {
  if (only_rank(e)) return "the reported matrix";
  switch (synced_origin_of(e.meta)) {
    case SyncedOrigin::SumOfRanks:
      return "the sum of the ranks' matrices";
    case SyncedOrigin::Recorded:
      return "the matrix the run reported";
    default:
      return "the reported matrix";
  }
}

std::string against(const Evaluation& e) {
  return estimated_counts(e) ? "the class counts estimated from the records" : "the class counts";
}

// Why a matrix whose every row sum matches is still wrong.
std::string balanced_rows_reason(const Evaluation& e) {
  const Diagnosis& d = e.diagnosis;
  if (estimated_counts(e) && d.missing_samples > 0)
    return plural(d.missing_samples, "sample", "samples") + " of the " +
           std::to_string(e.meta.dataset_size) +
           " the dumps declare were never evaluated, and without the true labels no row can "
           "be named";
  if (e.expected) return "its cells differ from the expected matrix while the row sums balance";
  return "samples counted twice and never balance out in the row sums";
}

}  // namespace

std::string synced_title(const Evaluation& e) {
  if (const auto r = only_rank(e))
    return "Reported = rank " + std::to_string(*r) + "'s own (unsynced)";
  switch (synced_origin_of(e.meta)) {
    case SyncedOrigin::Simulated:
      return "Synced (reported)";
    case SyncedOrigin::Recorded:
      return "Reported by the run";
    case SyncedOrigin::SumOfRanks:
      return "Sum of the ranks (computed)";
    case SyncedOrigin::Unknown:
      break;
  }
  return "Synced (as stored)";
}

std::string difference_title(const Evaluation& e) {
  const char* minus_expected = " − expected";
  if (const auto r = only_rank(e)) return "Rank " + std::to_string(*r) + "'s own" + minus_expected;
  switch (synced_origin_of(e.meta)) {
    case SyncedOrigin::Recorded:
      return std::string("Reported") + minus_expected;
    case SyncedOrigin::SumOfRanks:
      return std::string("Sum of the ranks") + minus_expected;
    case SyncedOrigin::Simulated:
    case SyncedOrigin::Unknown:
      break;
  }
  return std::string("Synced") + minus_expected;
}

std::string synced_description(const Evaluation& e) {
  if (const auto r = only_rank(e))
    return "the reported matrix, which is rank " + std::to_string(*r) +
           "'s own local matrix (no sync)";
  switch (synced_origin_of(e.meta)) {
    case SyncedOrigin::Simulated:
      return "the synced matrix the simulated frameworks report";
    case SyncedOrigin::Recorded:
      return "the matrix the run reported (recorded with the run)";
    case SyncedOrigin::SumOfRanks:
      return "the sum of the ranks' matrices, computed here: the run's reported matrix was not "
             "recorded";
    case SyncedOrigin::Unknown:
      break;
  }
  return "the synced matrix stored in the run file";
}

namespace {

// Whether every finding is about a value the run logged, none about the matrix.
bool only_logged_values_wrong(const Diagnosis& d) {
  return !d.findings.empty() && std::all_of(d.findings.begin(), d.findings.end(), [](auto& f) {
    return f.pattern == Pattern::LoggedAccuracy;
  });
}

}  // namespace

Verdict verdict_of(const Evaluation& e) {
  const Diagnosis& d = e.diagnosis;
  const int64_t rows = int64_t(d.mismatched_rows.size());
  if (rows == 0 && e.synced && only_logged_values_wrong(d)) {
    const std::string metric = d.findings.front().facts.logged_metric.value_or("accuracy");
    return {VerdictKind::Wrong,
            "WRONG LOGGED VALUE: " + judged(e) + " equals the expected one, but the " + metric +
                " the run logged with sync_dist is not its " + metric + ".",
            "⚠ Logged " + metric + " wrong (the matrix is right)"};
  }
  const bool sum_only = synced_origin_of(e.meta) == SyncedOrigin::SumOfRanks;
  // Never "equals the expected one" over a row that misses its class count (summarize in
  // core/diagnosis/diagnosis.cpp holds it too): such a row is wrong, whatever says otherwise.
  if (d.correct && rows == 0) {
    if (sum_only)
      return {VerdictKind::Correct,
              "the sum of the ranks' matrices equals the expected one; the run's reported "
              "matrix was not recorded, so a sync mistake (double, missing, half precision) "
              "cannot be ruled out.",
              "✓ Sum of the ranks correct (the sync is not recorded)"};
    if (estimated_counts(e))
      return {VerdictKind::Correct,
              judged(e) + " counts every recorded sample once and matches " + against(e) +
                  " (estimated: give the true labels with --dataset to check the rows).",
              "✓ Matches the estimated class counts"};
    return {VerdictKind::Correct, "the reported matrix equals the expected one.",
            "✓ Reported matrix correct"};
  }
  const Headline headline = headline_of(d.findings);
  if (headline == Headline::NothingRecorded)
    return {VerdictKind::NothingRecorded,
            "NOTHING WAS RECORDED: the evaluation holds no records, so nothing can be checked.",
            "⚠ Nothing was recorded"};
  if (!e.synced && headline == Headline::Hangs)
    return {VerdictKind::Incomplete,
            "INCOMPLETE: the ranks run different step counts, so the per-step gather would hang "
            "and nothing is reported.",
            "⚠ Ranks run different steps: the gather would hang, nothing is reported"};
  if (!e.synced && headline == Headline::GatherFails)
    return {VerdictKind::Incomplete,
            "INCOMPLETE: the ranks' last batches differ in size, so the per-step gather fails "
            "on unequal sizes and nothing is reported (pad_across_processes before "
            "gather_for_metrics, or even_batches=True, makes it run).",
            "⚠ Last batches differ in size: the gather fails, nothing is reported"};
  if (!e.synced)
    return {VerdictKind::Incomplete, "INCOMPLETE: nothing was reported, so nothing can be checked.",
            "⚠ Incomplete run: nothing was reported"};
  if (headline == Headline::FollowsTheDraw)
    // The class counts are not what this sampler evaluates: saying the rows are wrong
    // against them would blame DDP for the user's own draw.
    return {VerdictKind::FollowsTheDraw,
            judged(e) + " does not count the dataset: its sampler draws with replacement, so " +
                plural(rows, "row differs", "rows differ") +
                " from the class counts by that sampler's design; the findings say what else, if "
                "anything, changed the counts.",
            "⚠ Sampler draws with replacement: " + plural(rows, "row follows", "rows follow") +
                " its draw"};
  const std::string what = judged(e);
  if (rows > 0)
    return {VerdictKind::Wrong,
            "WRONG: " + what + " has " +
                plural(rows, "row whose sum differs", "rows whose sums differ") + " from " +
                against(e) + ".",
            "⚠ " + std::string(sum_only ? "Sum of the ranks" : "Reported matrix") +
                " wrong: " + plural(rows, "row", "rows") + " ≠ " +
                (estimated_counts(e) ? "estimated class count" : "class count")};
  return {VerdictKind::Wrong,
          "WRONG: " + what + " matches " + against(e) + " in every row, but " +
              balanced_rows_reason(e) + ".",
          estimated_counts(e) && d.missing_samples > 0
              ? "⚠ " + plural(d.missing_samples, "sample", "samples") +
                    " never evaluated (classes unknown)"
              : "⚠ Reported matrix wrong: cells differ, rows balance"};
}

std::string estimate_note(const Evaluation& e) {
  if (!estimated_counts(e)) return "";
  const Diagnosis& d = e.diagnosis;
  std::string note = "ESTIMATED: no true labels were given, so the class counts are those of the " +
                     plural(d.distinct_evaluated, "distinct sample", "distinct samples") +
                     " the ranks recorded";
  if (d.missing_samples > 0)
    note += ", and the " + plural(d.missing_samples, "sample", "samples") +
            " never evaluated have unknown classes";
  return note +
         ". Give the labels with --dataset npy:labels.npy (one label per dataset index, in "
         "dataset order) to check every row.";
}

std::vector<std::string> unchecked(const Evaluation& e) {
  std::vector<std::string> out;
  if (!e.synced) return out;
  switch (synced_origin_of(e.meta)) {
    case SyncedOrigin::SumOfRanks:
      out.push_back(
          "The dumps hold no reported matrix, so the synced matrix is the sum of the ranks' "
          "matrices, computed here: a double, missing or half-precision sync cannot be seen. "
          "Record what the run logged (the recorder's set_reported, or ShardLensCallback with a "
          "torchmetrics metric) to check the sync.");
      break;
    case SyncedOrigin::Unknown:
      out.push_back(
          "The run file does not say whether its synced matrix was reported by the run or summed "
          "from the ranks: a sync mistake may not show.");
      break;
    default:
      break;
  }
  return out;
}

}  // namespace shardlens

#pragma once
// The metrics people report from a confusion matrix, with torchmetrics' conventions: rows are
// true classes, columns predictions; a ratio whose denominator is 0 is 0 (zero_division=0);
// macro F1 averages the classes that occur (tp + fp + fn > 0, torchmetrics' macro weights);
// weighted F1 weights each class by its support (row sum). Accuracy is the fraction correct
// (trace / total, torchmetrics' average="micro").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/evaluation/evaluation.h"
#include "core/vocabulary/matrix.h"

namespace shardlens {

struct Metrics {
  double accuracy = 0;
  std::vector<double> precision, recall, f1;  // one per class
  double macro_f1 = 0;
  double weighted_f1 = 0;
};

Metrics compute_metrics(const Matrix& m);

// {"accuracy", "precision": [...], "recall": [...], "f1": [...], "macro_f1", "weighted_f1"}
nlohmann::json metrics_json(const Metrics& m);

// What `self.log("val_acc", acc, sync_dist=True)` logs: each rank's accuracy over the
// records it evaluated (Lightning's epoch value, the batch values weighted by batch size),
// averaged over the ranks with equal weights. With uneven shards it is not the accuracy.
// Absent with fewer than two ranks holding records.
std::optional<double> rank_mean_accuracy(const Evaluation& e);
inline constexpr const char* kRankMeanAccuracyName = "accuracy, mean of ranks (sync_dist)";
// What `self.log("val_acc", batch_acc, sync_dist=True, batch_size=n)` in validation_step
// logs: each rank sums value x batch size and the batch sizes; sync_dist averages both over
// the ranks, and the sizes' mean is divided in place in their int64 tensor (Lightning's
// _sync_ddp: result.copy_(result / world_size)), so it is truncated. That is
// (correct / W) / floor(records / W): the accuracy of every evaluated record when the records
// divide by W, more otherwise. Absent with fewer than two ranks or fewer records than ranks.
std::optional<double> batch_logged_accuracy(const Evaluation& e);
inline constexpr const char* kBatchLoggedAccuracyName = "accuracy, logged per batch (sync_dist)";

// One line of a metrics comparison: the metric's name, its value on the reported matrix
// (absent when nothing was reported), on the expected one, and reported - expected.
struct MetricRow {
  std::string name;  // "accuracy", "macro F1", "F1 <class>", "precision <class>", ...
  std::optional<double> reported;
  double expected = 0;
  std::optional<double> difference;
};

// A metric's difference as reports print it: "+0.0125", "-0.0500"; one within rounding noise
// of zero (a negative zero, 1e-17) is "0.0000", unsigned; one that rounds to 0.0000 but is a
// real change (one duplicated sample among 30,000) keeps its size: "-3.3e-05".
std::string difference_text(double v);

// Every metric of the reported and the expected matrix, the largest |difference| first
// (overall metrics before per-class ones on ties); a difference within rounding noise of zero
// is stored as 0 and sorts as one. Empty when the expected matrix is unknown.
std::vector<MetricRow> metric_rows(const Evaluation& e);

// {"reported": {...} | null, "expected": {...} | null, "difference": {...} | null,
//  "rank_mean_accuracy": number | null, "batch_logged_accuracy": number | null}
nlohmann::json evaluation_metrics_json(const Evaluation& e);

// The metrics as CSV: metric,class,reported,expected,difference (empty fields when unknown).
std::string metrics_csv(const Evaluation& e);

}  // namespace shardlens

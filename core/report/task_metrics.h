#pragma once
// The metrics of a segmentation, token or multilabel evaluation, computed as torchmetrics 1.9
// computes them from its state, on three matrices: the synced one (what the run reported),
// the expected one (one process on the whole dataset: the true value) and each rank's own,
// averaged over the ranks (what `self.log(name, per_rank_value, sync_dist=True)` logs: the
// per-rank-mean mistake).
//
// The scores of one matrix, and torchmetrics' conventions for them, are torchsem/task_scores.h's.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/evaluation/evaluation.h"
#include "core/torchsem/task_scores.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens {

// One metric three ways. Absent where its matrix is unknown: no synced matrix (the run
// ended before its sync), no expected one, fewer than two ranks that counted anything.
struct TaskMetric {
  std::string key;                 // "miou", "accuracy", "mean_class_accuracy", "macro_f1", ...
  std::string name;                // "mIoU", "pixel accuracy", "token accuracy", "macro F1", ...
  std::optional<double> reported;  // from the synced matrix
  std::optional<double> truth;     // from the expected matrix
  std::optional<double> per_rank_mean;  // each rank's own value, averaged over the ranks
  std::optional<double> difference() const {
    if (!reported || !truth) return std::nullopt;
    return *reported - *truth;
  }
};

// One per-class metric three ways: values[c] of each side, indexed like the classes (or
// labels); a side that is unknown is empty.
struct PerClassMetric {
  std::string key;   // "iou", "f1", "precision", "recall"
  std::string name;  // "IoU", "F1", ...
  std::vector<double> reported, truth, per_rank_mean;
};

struct TaskMetrics {
  Task task = Task::Classification;
  // The overall metrics, the task's headline first: segmentation mIoU, pixel accuracy, mean
  // class accuracy (and, of 2 classes, the binary IoU); tokens token accuracy, macro F1 (precision,
  // recall); multilabel macro F1, precision, recall, label-decision accuracy.
  std::vector<TaskMetric> overall;
  // Segmentation: IoU (then F1); tokens: F1, precision, recall; multilabel: per label F1,
  // precision, recall. The first is the one the reports rank by.
  std::vector<PerClassMetric> per_class;
  // The per-class names: the classes', or for multilabel the labels' (L names).
  std::vector<std::string> names;
  int ignore_index = -1;   // as the run gave it
  int ranks_averaged = 0;  // how many ranks the per-rank means average (ranks that counted)

  bool empty() const { return overall.empty(); }
  const TaskMetric* find(const std::string& key) const;
};

// Nothing (empty()) for a classification evaluation, whose metrics are metrics.h's.
// O(ranks x C^2): at 150 classes and 8 ranks well under a millisecond of a core.
TaskMetrics task_metrics(const Evaluation& e);

// A class whose per-class metric moved, for "the worst per-class IoU differences".
struct ClassDifference {
  int32_t index = 0;  // class, or label for multilabel
  double reported = 0, truth = 0;
  double difference() const { return reported - truth; }
};
// The `limit` classes of `metric` whose |reported - true| is largest (above 1e-12), largest
// first, the lower index on ties; empty when either side is unknown.
std::vector<ClassDifference> largest_differences(const PerClassMetric& metric, size_t limit);

// {"task", "unit" ("pixels"...), "ignore_index": int | null (-1: null),
//  "ranks_averaged", "names": [...],
//  "metrics": {KEY: {"name", "reported", "true", "per_rank_mean", "difference"}} (KEY
//  "miou", "accuracy", "mean_class_accuracy", "binary_iou", "macro_f1", ...),
//  "per_class": {KEY: {"name", "reported": [...], "true": [...], "per_rank_mean": [...]}},
//  "largest_differences": [{"metric", "class", "index", "reported", "true", "difference"}]}
// (the first per-class metric's, up to 10). Unknown values and NaN are null; an unknown
// per-class side is [].
nlohmann::json task_metrics_json(const TaskMetrics& t);

// The report's text block, e.g. "mIoU reported 0.6123, true 0.6098 (per-rank mean
// 0.6201)", then the largest per-class differences; empty for classification.
std::string task_metrics_text(const TaskMetrics& t);

}  // namespace shardlens

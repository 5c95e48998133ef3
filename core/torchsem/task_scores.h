#pragma once
// The scores torchmetrics 1.9 computes from a segmentation, token or multilabel confusion
// state, of one matrix; and the one value a run logs of it (its headline metric), which the
// diagnosis checks when the run logged each rank's own.
//
// Conventions, from torchmetrics' code (functional/classification/jaccard.py, stat_scores.py,
// accuracy.py, precision_recall.py, f_beta.py, utilities/compute.py):
//   - a per-class ratio whose denominator is 0 is 0 (zero_division=0);
//   - mIoU, MulticlassJaccardIndex(average="macro"): the mean of the IoUs of the classes
//     whose row or column holds a count, leaving out ignore_index when it is a class; NaN
//     when no class counts (torchmetrics divides by a zero weight sum there, unguarded);
//   - macro precision / recall / F1 and mean class accuracy (Multiclass*, average="macro"):
//     the mean over classes with tp + fp + fn > 0 (ignore_index left in: only its row is
//     empty), 0 when none;
//   - multilabel (Multilabel*, average="macro"): the mean over EVERY label, a label that
//     never occurs counting 0; accuracy is MultilabelAccuracy(average="micro"), the fraction
//     of label decisions right;
//   - pixel / token accuracy: MulticlassAccuracy(average="micro"), trace / total.
// Ignored pixels and tokens are not in the matrices (sample_cells.h), as torchmetrics drops
// them before counting.
#include <string>
#include <vector>

#include "core/vocabulary/matrix.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens {

// Every metric of one matrix. Per-class vectors have one value per class (segmentation,
// tokens) or per label (multilabel: L = classes / 2); `iou` is empty for multilabel.
struct TaskScores {
  std::vector<double> iou;                    // MulticlassJaccardIndex(average=None)
  std::vector<double> precision, recall, f1;  // average=None
  double miou = 0;                            // NaN when no class counts (see above)
  // Two classes: class 1's IoU, what BinaryJaccardIndex reports of the same masks (tp / (tp
  // + fp + fn) of the positive class, ignored pixels left out); NaN with another count.
  double binary_iou = 0;
  double accuracy = 0;             // sample / pixel / token / label-decision accuracy
  double mean_class_accuracy = 0;  // MulticlassAccuracy(average="macro")
  double macro_precision = 0, macro_recall = 0, macro_f1 = 0;
};

// `ignore_index` as the run gave it (negative or past the classes: no class is ignored).
// Classification is scored as a multiclass matrix (its accuracy is trace / total).
TaskScores task_scores(const Matrix& m, Task task, int ignore_index);

// The metric a run of the task logs as its headline, by name: "accuracy" (classification),
// "mIoU" (segmentation), "token accuracy" (tokens), "macro F1" (multilabel).
std::string headline_metric_name(Task task);
// Its value of one matrix (NaN where the task's score is: an mIoU with no class counted).
double headline_metric(const Matrix& m, Task task, int ignore_index);

}  // namespace shardlens

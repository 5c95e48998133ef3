#include "core/torchsem/task_scores.h"

#include <limits>

namespace shardlens {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// torchmetrics' _safe_divide with zero_division=0.
double safe_divide(double num, double denom) {
  return denom != 0 ? num / denom : 0.0;
}

// _adjust_weights_safe_divide: sum of weight * score / sum of weights, 0 when no weight.
double weighted_mean(const std::vector<double>& score, const std::vector<double>& weight) {
  double weights = 0;
  for (double w : weight) weights += w;
  double sum = 0;
  for (size_t i = 0; i < score.size(); ++i) sum += safe_divide(weight[i] * score[i], weights);
  return sum;
}

TaskScores multiclass_scores(const Matrix& m, int ignore_index) {
  const int32_t c = m.classes;
  const std::vector<double> rows = m.row_sums(), cols = m.col_sums();
  TaskScores s;
  std::vector<double> present(size_t(c), 0.0), iou_weight(size_t(c), 0.0);
  double correct = 0, total = 0;
  for (int32_t k = 0; k < c; ++k) {
    const size_t i = size_t(k);
    const double tp = m.at(k, k), fp = cols[i] - tp, fn = rows[i] - tp;
    correct += tp;
    total += rows[i];
    s.iou.push_back(safe_divide(tp, cols[i] + rows[i] - tp));
    s.precision.push_back(safe_divide(tp, tp + fp));
    s.recall.push_back(safe_divide(tp, tp + fn));
    s.f1.push_back(safe_divide(2 * tp, 2 * tp + fn + fp));
    present[i] = tp + fp + fn > 0 ? 1.0 : 0.0;
    // The Jaccard index drops an ignore_index that is a class (its column may still hold
    // the pixels predicted as it) and every class with an empty row and column.
    iou_weight[i] = (k == ignore_index || rows[i] + cols[i] == 0) ? 0.0 : 1.0;
  }
  double iou_weights = 0;
  for (double w : iou_weight) iou_weights += w;
  // ((weights * jaccard) / weights.sum()).sum(): no safe division, so NaN with no class.
  if (iou_weights == 0) {
    s.miou = kNaN;
  } else {
    s.miou = 0;
    for (size_t i = 0; i < size_t(c); ++i) s.miou += iou_weight[i] * s.iou[i] / iou_weights;
  }
  s.accuracy = safe_divide(correct, total);
  s.binary_iou = c == 2 ? s.iou[1] : kNaN;
  s.mean_class_accuracy = weighted_mean(s.recall, present);
  s.macro_precision = weighted_mean(s.precision, present);
  s.macro_recall = s.mean_class_accuracy;
  s.macro_f1 = weighted_mean(s.f1, present);
  return s;
}

// Label l's 2 x 2 block is cells (2l + t, 2l + p) (sample_cells.h).
TaskScores multilabel_scores(const Matrix& m) {
  const int32_t labels = m.classes / 2;
  TaskScores s;
  s.miou = kNaN;
  s.binary_iou = kNaN;
  std::vector<double> label_accuracy, every(size_t(labels), 1.0);
  double right = 0, decisions = 0;
  for (int32_t l = 0; l < labels; ++l) {
    const int32_t absent = multilabel_class(l, false), present = multilabel_class(l, true);
    const double tn = m.at(absent, absent), fp = m.at(absent, present);
    const double fn = m.at(present, absent), tp = m.at(present, present);
    s.precision.push_back(safe_divide(tp, tp + fp));
    s.recall.push_back(safe_divide(tp, tp + fn));
    s.f1.push_back(safe_divide(2 * tp, 2 * tp + fn + fp));
    label_accuracy.push_back(safe_divide(tp + tn, tp + tn + fp + fn));
    right += tp + tn;
    decisions += tp + tn + fp + fn;
  }
  // Multilabel macro averages weigh every label, one that never occurs too.
  s.accuracy = safe_divide(right, decisions);
  s.mean_class_accuracy = weighted_mean(label_accuracy, every);
  s.macro_precision = weighted_mean(s.precision, every);
  s.macro_recall = weighted_mean(s.recall, every);
  s.macro_f1 = weighted_mean(s.f1, every);
  return s;
}

}  // namespace

TaskScores task_scores(const Matrix& m, Task task, int ignore_index) {
  return task == Task::Multilabel ? multilabel_scores(m) : multiclass_scores(m, ignore_index);
}

std::string headline_metric_name(Task task) {
  switch (task) {
    case Task::Segmentation:
      return "mIoU";
    case Task::Tokens:
      return "token accuracy";
    case Task::Multilabel:
      return "macro F1";
    case Task::Classification:
      break;
  }
  return "accuracy";
}

double headline_metric(const Matrix& m, Task task, int ignore_index) {
  const TaskScores s = task_scores(m, task, ignore_index);
  switch (task) {
    case Task::Segmentation:
      return s.miou;
    case Task::Multilabel:
      return s.macro_f1;
    case Task::Tokens:
    case Task::Classification:
      break;
  }
  return s.accuracy;
}

}  // namespace shardlens

#include "core/report/task_metrics.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace shardlens {

using nlohmann::json;

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

// Which overall and per-class metrics a task reports, its headline first.
struct Field {
  const char* key;
  double TaskScores::*value;
};
struct ClassField {
  const char* key;
  const char* name;
  std::vector<double> TaskScores::*values;
};

std::vector<Field> overall_fields(Task task, int32_t classes) {
  switch (task) {
    case Task::Segmentation:
      if (classes == 2)  // masks: what a BinaryJaccardIndex beside them reports
        return {{"miou", &TaskScores::miou},
                {"binary_iou", &TaskScores::binary_iou},
                {"accuracy", &TaskScores::accuracy},
                {"mean_class_accuracy", &TaskScores::mean_class_accuracy}};
      return {{"miou", &TaskScores::miou},
              {"accuracy", &TaskScores::accuracy},
              {"mean_class_accuracy", &TaskScores::mean_class_accuracy}};
    case Task::Tokens:
      return {{"accuracy", &TaskScores::accuracy},
              {"macro_f1", &TaskScores::macro_f1},
              {"macro_precision", &TaskScores::macro_precision},
              {"macro_recall", &TaskScores::macro_recall}};
    case Task::Multilabel:
      return {{"macro_f1", &TaskScores::macro_f1},
              {"macro_precision", &TaskScores::macro_precision},
              {"macro_recall", &TaskScores::macro_recall},
              {"accuracy", &TaskScores::accuracy}};
    case Task::Classification:
      break;
  }
  return {};
}

std::string overall_name(const std::string& key, Task task) {
  if (key == "miou") return "mIoU";
  if (key == "binary_iou") return "IoU of class 1 (binary)";
  if (key == "accuracy") return count_unit_one(task) + " accuracy";
  if (key == "mean_class_accuracy") return "mean class accuracy";
  if (key == "macro_f1") return "macro F1";
  if (key == "macro_precision") return "macro precision";
  return "macro recall";
}

std::vector<ClassField> class_fields(Task task) {
  if (task == Task::Segmentation)
    return {{"iou", "IoU", &TaskScores::iou}, {"accuracy", "accuracy", &TaskScores::recall}};
  return {{"f1", "F1", &TaskScores::f1},
          {"precision", "precision", &TaskScores::precision},
          {"recall", "recall", &TaskScores::recall}};
}

std::vector<std::string> per_class_names(const Evaluation& e) {
  if (e.meta.task != Task::Multilabel) return e.meta.class_names;
  // "cat present" -> "cat": the label's name without the class's suffix.
  std::vector<std::string> names;
  const std::string suffix = " present";
  for (int32_t l = 0; l < e.classes() / 2; ++l) {
    std::string name = e.class_name(multilabel_class(l, true));
    if (name.size() > suffix.size() && name.ends_with(suffix))
      name.resize(name.size() - suffix.size());
    else
      name = "label " + std::to_string(l);
    names.push_back(std::move(name));
  }
  return names;
}

json value_json(std::optional<double> v) {
  if (!v || std::isnan(*v)) return nullptr;
  return *v;
}

json values_json(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(value_json(v));
  return out;
}

std::string value_text(std::optional<double> v) {
  if (!v) return "(none)";
  if (std::isnan(*v)) return "nan";
  std::ostringstream s;
  s << std::fixed << std::setprecision(4) << *v;
  return s.str();
}

// A difference that rounds to 0.0000 is still shown as one (3.1e-06), not as none.
std::string signed_text(double v) {
  if (std::abs(v) >= 5e-5) return (v >= 0 ? "+" : "") + value_text(v);
  std::ostringstream s;
  s << std::showpos << std::scientific << std::setprecision(1) << v;
  return s.str();
}

}  // namespace

TaskScores task_scores(const Matrix& m, Task task, int ignore_index) {
  return task == Task::Multilabel ? multilabel_scores(m) : multiclass_scores(m, ignore_index);
}

const TaskMetric* TaskMetrics::find(const std::string& key) const {
  for (const TaskMetric& metric : overall)
    if (metric.key == key) return &metric;
  return nullptr;
}

TaskMetrics task_metrics(const Evaluation& e) {
  TaskMetrics out;
  out.task = e.meta.task;
  out.ignore_index = e.meta.ignore_index;
  if (out.task == Task::Classification) return out;
  const int ignore = e.meta.ignore_index;
  std::optional<TaskScores> reported, truth;
  if (e.synced) reported = task_scores(*e.synced, out.task, ignore);
  if (e.expected) truth = task_scores(*e.expected, out.task, ignore);
  // A rank that counted nothing logged nothing (as rank_mean_accuracy in metrics.h).
  std::vector<TaskScores> ranks;
  for (const Matrix& m : e.per_rank)
    if (m.total() > 0) ranks.push_back(task_scores(m, out.task, ignore));
  if (ranks.size() >= 2) out.ranks_averaged = int(ranks.size());

  for (const Field& field : overall_fields(out.task, e.classes())) {
    TaskMetric metric;
    metric.key = field.key;
    metric.name = overall_name(metric.key, out.task);
    if (reported) metric.reported = (*reported).*field.value;
    if (truth) metric.truth = (*truth).*field.value;
    if (out.ranks_averaged > 0) {
      double sum = 0;
      for (const TaskScores& r : ranks) sum += r.*field.value;
      metric.per_rank_mean = sum / double(ranks.size());
    }
    out.overall.push_back(std::move(metric));
  }
  for (const ClassField& field : class_fields(out.task)) {
    PerClassMetric metric;
    metric.key = field.key;
    metric.name = field.name;
    if (reported) metric.reported = (*reported).*field.values;
    if (truth) metric.truth = (*truth).*field.values;
    if (out.ranks_averaged > 0) {
      metric.per_rank_mean.assign((ranks.front().*field.values).size(), 0.0);
      for (const TaskScores& r : ranks)
        for (size_t i = 0; i < metric.per_rank_mean.size(); ++i)
          metric.per_rank_mean[i] += (r.*field.values)[i] / double(ranks.size());
    }
    out.per_class.push_back(std::move(metric));
  }
  out.names = per_class_names(e);
  return out;
}

std::vector<ClassDifference> largest_differences(const PerClassMetric& metric, size_t limit) {
  std::vector<ClassDifference> out;
  if (metric.reported.empty() || metric.reported.size() != metric.truth.size()) return out;
  for (size_t i = 0; i < metric.reported.size(); ++i) {
    const ClassDifference d{int32_t(i), metric.reported[i], metric.truth[i]};
    if (std::abs(d.difference()) > 1e-12) out.push_back(d);
  }
  std::stable_sort(out.begin(), out.end(), [](const ClassDifference& a, const ClassDifference& b) {
    return std::abs(a.difference()) > std::abs(b.difference());
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

json task_metrics_json(const TaskMetrics& t) {
  json metrics = json::object();
  for (const TaskMetric& m : t.overall) {
    metrics[m.key] = {{"name", m.name},
                      {"reported", value_json(m.reported)},
                      {"true", value_json(m.truth)},
                      {"per_rank_mean", value_json(m.per_rank_mean)},
                      {"difference", value_json(m.difference())}};
  }
  json per_class = json::object();
  for (const PerClassMetric& m : t.per_class) {
    per_class[m.key] = {{"name", m.name},
                        {"reported", values_json(m.reported)},
                        {"true", values_json(m.truth)},
                        {"per_rank_mean", values_json(m.per_rank_mean)}};
  }
  json largest = json::array();
  if (!t.per_class.empty()) {
    const PerClassMetric& first = t.per_class.front();
    for (const ClassDifference& d : largest_differences(first, 10)) {
      largest.push_back({{"metric", first.key},
                         {"class", t.names.at(size_t(d.index))},
                         {"index", d.index},
                         {"reported", value_json(d.reported)},
                         {"true", value_json(d.truth)},
                         {"difference", value_json(d.difference())}});
    }
  }
  return {{"task", to_string(t.task)},
          {"unit", count_unit(t.task)},
          {"ignore_index", t.ignore_index != -1 ? json(t.ignore_index) : json(nullptr)},
          {"ranks_averaged", t.ranks_averaged},
          {"names", t.names},
          {"metrics", metrics},
          {"per_class", per_class},
          {"largest_differences", largest}};
}

std::string task_metrics_text(const TaskMetrics& t) {
  if (t.empty()) return "";
  std::ostringstream out;
  out << "Metrics over " << count_unit(t.task) << " (reported vs true, torchmetrics conventions)\n";
  for (const TaskMetric& m : t.overall) {
    out << "  " << m.name << " reported " << value_text(m.reported) << ", true "
        << value_text(m.truth);
    if (m.per_rank_mean) out << " (per-rank mean " << value_text(m.per_rank_mean) << ")";
    out << "\n";
  }
  if (t.ranks_averaged > 0) {
    out << "  per-rank mean: each rank's own value averaged over " << t.ranks_averaged
        << " ranks, what self.log(name, value, sync_dist=True) of a per-rank value logs\n";
  }
  if (t.per_class.empty()) return out.str();
  const PerClassMetric& first = t.per_class.front();
  const size_t limit = 10;
  const std::vector<ClassDifference> worst = largest_differences(first, limit + 1);
  const std::string what = t.task == Task::Multilabel ? "label" : "class";
  if (worst.empty()) {
    if (!first.reported.empty() && !first.truth.empty())
      out << "  every per-" << what << " " << first.name << " as true\n";
    return out.str();
  }
  out << "  largest per-" << what << " " << first.name << " differences:\n";
  size_t width = 14;
  for (const ClassDifference& d : worst) width = std::max(width, t.names[size_t(d.index)].size());
  for (size_t i = 0; i < std::min(worst.size(), limit); ++i) {
    const ClassDifference& d = worst[i];
    out << "    " << std::left << std::setw(int(width)) << t.names[size_t(d.index)] << std::right
        << "  reported " << value_text(d.reported) << ", true " << value_text(d.truth) << " ("
        << signed_text(d.difference()) << ")\n";
  }
  if (worst.size() > limit) {
    const size_t more = largest_differences(first, first.reported.size()).size() - limit;
    const std::string plural = t.task == Task::Multilabel ? "labels" : "classes";
    out << "    ... " << more << " more " << (more == 1 ? what : plural) << " differ\n";
  }
  return out.str();
}

}  // namespace shardlens

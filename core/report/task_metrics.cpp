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

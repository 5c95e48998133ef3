#include "ui/jobs/result_tables.h"

#include <cmath>
#include <string>

#include "core/report/task_metrics.h"
#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

namespace {

void addTaskMetrics(const Evaluation& e, MetricsTable& table) {
  const TaskMetrics t = task_metrics(e);
  const auto add = [&table](std::string name, std::optional<double> reported,
                            std::optional<double> truth, std::optional<double> perRank) {
    std::optional<double> difference;
    if (reported && truth) difference = *reported - *truth;
    table.rows.push_back({std::move(name), reported, truth.value_or(std::nan("")), difference});
    table.perRankMean.push_back(perRank);
  };
  // The headline (mIoU, token accuracy, macro F1) first, as a report states it.
  for (const TaskMetric& m : t.overall) add(m.name, m.reported, m.truth, m.per_rank_mean);
  // Then the classes (labels) the errors moved most, by the task's first per-class metric.
  if (t.per_class.empty()) return;
  const PerClassMetric& first = t.per_class.front();
  constexpr size_t kClassRows = 10;
  for (const ClassDifference& d : largest_differences(first, kClassRows)) {
    const size_t c = size_t(d.index);
    const std::string name = c < t.names.size() ? t.names[c] : std::to_string(c);
    add(first.name + " " + name, d.reported, d.truth,
        c < first.per_rank_mean.size() ? std::optional<double>(first.per_rank_mean[c])
                                       : std::nullopt);
  }
}

}  // namespace

MetricsTable metricsTable(const Evaluation& e) {
  MetricsTable table;
  table.task = e.meta.task;
  if (e.meta.task != Task::Classification)
    addTaskMetrics(e, table);
  else
    table.rows = metric_rows(e);
  return table;
}

ResultTablesPtr tablesOf(const Evaluation& e, Progress* progress) {
  auto tables = std::make_shared<ResultTables>();
  step(progress, "ranking the confusions", 0.0);
  tables->confusion = rank_confusion(e, kConfusionsShown, 1, Repeats::FromRecords);
  step(progress, "computing the metrics", 0.0);
  tables->metrics = metricsTable(e);
  return tables;
}

ResultTablesPtr tablesFor(const EvaluationResult& result) {
  return result.tables ? result.tables : tablesOf(result.eval);
}

}  // namespace shardlens::ui

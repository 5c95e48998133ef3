#pragma once
// What the "Most confused" and Metrics docks show of a result, computed with the result in
// the job runner's worker: at 1000 classes the confusion ranking reads a million cells (and,
// for a wrong result, walks every record for the wrong rows' repeats) and the metrics read
// every class, so the GUI thread, applying a result, only fills the tables from these.
// One place computes each: tablesOf() (the ranking and metric_rows / task_metrics of core).
#include <memory>
#include <optional>
#include <vector>

#include "core/evaluation/evaluation.h"
#include "core/report/confusion_ranking.h"
#include "core/report/metrics.h"
#include "core/vocabulary/progress.h"

namespace shardlens::ui {

struct EvaluationResult;

// How many most confused pairs and wrong rows the Most confused dock lists.
inline constexpr size_t kConfusionsShown = 25;

// The Metrics dock's rows: a classification's metric_rows, or a task's of many counts
// (mIoU, token accuracy, ...): its headline metrics, then the classes the errors moved most.
struct MetricsTable {
  Task task = Task::Classification;
  std::vector<MetricRow> rows;                     // expected NaN: unknown (task metrics)
  std::vector<std::optional<double>> perRankMean;  // by row, task metrics only
};

MetricsTable metricsTable(const Evaluation& e);

struct ResultTables {
  // rank_confusion(e, kConfusionsShown, 1, Repeats::FromRecords)
  ConfusionRanking confusion;
  MetricsTable metrics;
};
using ResultTablesPtr = std::shared_ptr<const ResultTables>;

// Both tables of `e` (the worker's part of a result); throws Cancelled when `progress` asks.
ResultTablesPtr tablesOf(const Evaluation& e, Progress* progress = nullptr);

// The tables of `result`: those its job computed; a result made without the runner (tests)
// has them computed now, on the caller's thread.
ResultTablesPtr tablesFor(const EvaluationResult& result);

}  // namespace shardlens::ui

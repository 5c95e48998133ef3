#pragma once
// The metrics people report (accuracy, macro / weighted F1, per-class precision, recall and
// F1), on the reported matrix and on the expected one, and what the errors changed: a table
// beside the diagnosis, the largest change first. A segmentation, token or multilabel
// evaluation shows its own metrics instead (core/report/task_metrics.h): mIoU, pixel or token
// accuracy, macro F1, ... reported, true and averaged over the ranks (the per-rank-mean
// mistake), the headline first, then the classes whose IoU (F1) moved most.
#include <QAbstractTableModel>
#include <QHash>
#include <QTableView>
#include <vector>

#include "core/report/metrics.h"
#include "core/report/task_metrics.h"
#include "ui/jobs/evaluation_runner.h"
#include "ui/jobs/result_tables.h"

namespace shardlens::ui {

class MetricsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  // PerRankMean: each rank's own value averaged (tasks of many counts only; else hidden).
  enum Column { Metric, Reported, Expected, Difference, PerRankMean, ColumnCount };
  explicit MetricsModel(QObject* parent = nullptr);
  // The rows the job computed with the result (ResultTables::metrics); nullptr clears.
  void setTable(const MetricsTable* table);
  // The rows of `e`, computed now (tests); nullptr clears.
  void setEvaluation(const Evaluation* e);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  const std::vector<MetricRow>& rows() const { return m_rows; }
  // Whether the rows are a task's of many counts (mIoU, ...), with per-rank means.
  bool taskMetrics() const { return m_task != Task::Classification; }

 private:
  std::vector<MetricRow> m_rows;                     // expected NaN: unknown
  std::vector<std::optional<double>> m_perRankMean;  // by row, task metrics only
  Task m_task = Task::Classification;
};

class MetricsPanel : public QTableView {
  Q_OBJECT
 public:
  explicit MetricsPanel(QWidget* parent = nullptr);
  void setResult(const ResultPtr& result);
  MetricsModel* metricsModel() const { return m_model; }
  // Why the table holds no metric (the expected matrix is unknown), shown in its place; empty
  // when there are rows or nothing to explain.
  QString emptyText() const { return m_emptyText; }
  // The width at which every number and header is whole with no sideways scrolling and each
  // name whole on at most two lines: the narrowest its dock becomes when it gives way to the
  // views.
  int readableWidth() const;

 protected:
  void changeEvent(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  // A name wider than its column (a dense task's "mean class accuracy" in a narrow dock)
  // breaks onto a second line, the rows twice as tall, rather than being cut.
  void fitNames(int nameWidth);
  // The widths of a name: on one line, and on two broken at the best space (a class number
  // stays with its measure). Measured once a name: a 1000-class table has 3,003 rows, and
  // measuring them all took 11 ms of the GUI thread on every setting change.
  struct NameWidths {
    int oneLine = 0, twoLines = 0;
  };
  NameWidths nameWidths(const QString& name) const;
  // The widest name of the current rows on one line and on two (setResult).
  void measureNames();

  int m_lineRowHeight = 0;                          // a row of one line, the style's default
  mutable QHash<QString, NameWidths> m_nameWidths;  // by name, for this widget's font
  NameWidths m_widestName;

  MetricsModel* m_model;
  ResultPtr m_result;  // keeps the evaluation the model was filled from alive
  QString m_classificationTip;
  QString m_emptyText;
};

}  // namespace shardlens::ui

#pragma once
// The metrics people report (accuracy, macro / weighted F1, per-class precision, recall and
// F1), on the reported matrix and on the expected one, and what the errors changed: a table
// beside the diagnosis, the largest change first.
#include <QAbstractTableModel>
#include <QTableView>
#include <vector>

#include "core/report/metrics.h"
#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

class MetricsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Metric, Reported, Expected, Difference, ColumnCount };
  explicit MetricsModel(QObject* parent = nullptr);
  void setEvaluation(const Evaluation* e);  // nullptr clears
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  const std::vector<MetricRow>& rows() const { return m_rows; }

 private:
  std::vector<MetricRow> m_rows;
};

class MetricsPanel : public QTableView {
  Q_OBJECT
 public:
  explicit MetricsPanel(QWidget* parent = nullptr);
  void setResult(const ResultPtr& result);
  MetricsModel* metricsModel() const { return m_model; }

 private:
  MetricsModel* m_model;
  ResultPtr m_result;  // keeps the evaluation the model was filled from alive
};

}  // namespace shardlens::ui

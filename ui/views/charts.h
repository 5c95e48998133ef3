#pragma once
// Qt Charts views, kept in this one file pair: Qt Charts is deprecated from Qt 6.10 in
// favour of Qt Graphs, and only this file has to move.
#include <QStringList>
#include <QWidget>
#include <vector>

#include "ui/jobs/evaluation_runner.h"
#include "ui/views/drift_view.h"

class QChartView;

namespace shardlens::ui {

class ChartsPanel : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMaxClassBars = 30;
  explicit ChartsPanel(QWidget* parent = nullptr);
  void setResult(const ResultPtr& result);
  QChartView* classChart() const { return m_classes; }
  QChartView* rankChart() const { return m_ranks; }
  // Each class's row sum minus its true count, epoch by epoch (runs of several epochs).
  DriftView* driftView() const { return m_drift; }

  // Class names below the bars: horizontal when each fits its bar's width, else rotated to
  // read upwards, so a name is never cut to "T…" (public for tests; done on every resize).
  static void fitCategoryLabels(QChartView* view);

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  // What a chart shows: a result that would draw the same bars (an epoch of a correct
  // evaluation) keeps the chart as laid out, since a Qt Charts relayout measures every label.
  struct Shown {
    QString title;
    QStringList categories;
    std::vector<double> values;
    bool operator==(const Shown&) const = default;
  };
  Shown m_classesShown, m_ranksShown;
  QChartView* m_classes;
  QChartView* m_ranks;
  DriftView* m_drift;
};

}  // namespace shardlens::ui

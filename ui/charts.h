#pragma once
// Qt Charts views, kept in this one file pair: Qt Charts is deprecated from Qt 6.10 in
// favour of Qt Graphs, and only this file has to move.
#include <QWidget>

#include "ui/evaluation_runner.h"

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

 private:
  QChartView* m_classes;
  QChartView* m_ranks;
};

}  // namespace shardlens::ui

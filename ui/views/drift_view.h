#pragma once
// The drift of a run's row sums over its epochs as a widget: the drift figure
// (ui/render/drift_figure.h), the shown epoch outlined, a tooltip per cell.
#include <QWidget>

#include "ui/jobs/evaluation_runner.h"
#include "ui/render/drift_figure.h"

namespace shardlens::ui {

class DriftView : public QWidget {
  Q_OBJECT
 public:
  explicit DriftView(QWidget* parent = nullptr);
  // A result of a run of several epochs; anything else leaves the view empty.
  void setResult(const ResultPtr& result);
  const render::DriftFigure& figure() const { return m_figure; }
  QSize sizeHint() const override { return {320, 280}; }
  QSize minimumSizeHint() const override { return {200, 180}; }

 protected:
  bool event(QEvent* e) override;
  void paintEvent(QPaintEvent* e) override;

 private:
  render::DriftFigure m_figure;
  render::HeatmapStyle m_style;
  const void* m_epochs = nullptr;  // the run whose drift is computed, so a step costs nothing
};

}  // namespace shardlens::ui

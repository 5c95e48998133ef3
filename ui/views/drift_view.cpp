#include "ui/views/drift_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include "ui/render/heatmap_source.h"
#include "ui/render/shown_text.h"

namespace shardlens::ui {

DriftView::DriftView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("driftView"));
  setMouseTracking(true);
  m_style.fontPixels = 10;
}

void DriftView::setResult(const ResultPtr& result) {
  if (!result || !result->epochs || result->epochs->size() < 2) {
    m_figure = {};
    m_epochs = nullptr;
    update();
    return;
  }
  // Stepping through the run's epochs only moves the outline.
  if (m_epochs != result->epochs.get()) {
    std::vector<const Evaluation*> evaluations;
    for (const ResultPtr& r : *result->epochs) evaluations.push_back(&r->eval);
    m_figure.drift = row_drift(evaluations);
    m_figure.classNames = render::classNames(result->eval);
    m_epochs = result->epochs.get();
  }
  m_figure.highlight = int(result->epochIndex);
  update();
}

void DriftView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  render::paintDrift(p, m_figure, m_style, QRectF(rect()));
}

bool DriftView::event(QEvent* e) {
  if (e->type() != QEvent::ToolTip || m_figure.drift.classes <= 0) return QWidget::event(e);
  const QPointF at = static_cast<QHelpEvent*>(e)->pos();
  const QRectF grid = render::driftGrid(m_figure, m_style, QRectF(rect()));
  const RowDrift& d = m_figure.drift;
  if (!grid.contains(at)) {
    QToolTip::hideText();
    return true;
  }
  const int cls =
      std::clamp(int((at.y() - grid.top()) / grid.height() * d.classes), 0, d.classes - 1);
  const int column = std::clamp(int((at.x() - grid.left()) / grid.width() * d.columns.size()), 0,
                                int(d.columns.size()) - 1);
  const double off = d.at(cls, size_t(column));
  QToolTip::showText(
      static_cast<QHelpEvent*>(e)->globalPos(),
      tr("<b>%1</b>, %2<br>row sum − true count: <b>%3%4</b>")
          .arg(m_figure.classNames.size() > size_t(cls) ? richText(m_figure.classNames[size_t(cls)])
                                                        : QString::number(cls),
               QString::fromStdString(d.columns[size_t(column)]))
          .arg(off > 0 ? QStringLiteral("+") : QString())
          .arg(off),
      this);
  return true;
}

}  // namespace shardlens::ui

#include "ui/heatmap_view.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>

#include "ui/render/heatmap_painter.h"

namespace shardlens::ui {

using namespace shardlens::render;

HeatmapView::HeatmapView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setFocusPolicy(Qt::ClickFocus);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void HeatmapView::setData(HeatmapData data) {
  const bool sameShape = data.classes == m_data.classes;
  m_data = std::move(data);
  m_image = buildHeatmapImage(m_data, m_style);
  if (!sameShape) m_view.reset();
  m_hover.reset();
  relayout();
  update();
}

void HeatmapView::setStyle(const HeatmapStyle& style) {
  const bool recolour = style.colormap != m_style.colormap || style.logScale != m_style.logScale;
  m_style = style;
  if (recolour) m_image = buildHeatmapImage(m_data, m_style);
  relayout();
  update();
}

void HeatmapView::resetZoom() {
  m_view.reset();
  update();
}

QSize HeatmapView::sizeHint() const {
  return m_style.compact ? QSize(240, 240) : QSize(400, 400);
}
QSize HeatmapView::minimumSizeHint() const {
  return m_style.compact ? QSize(140, 140) : QSize(200, 200);
}

int HeatmapView::idealHeight(int width) const {
  const LayoutMetrics m = layoutMetrics(m_data, m_style);
  const auto g = [&m](double size) { return size > 0 ? size + m.gap : 0.0; };
  const double side =
      width - 2 * m.margin - g(m.axisTitle) - g(m.rowLabels) - g(m.rowSums) - g(m.colorBar);
  const double extra = 2 * m.margin + g(m.title) + g(m.colSums) + g(m.colLabels) + g(m.axisTitle);
  return int(std::ceil(std::max(side, 60.0) + extra));
}

void HeatmapView::relayout() {
  m_style.indexLabels = false;
  m_layout = computeLayout(QRectF(rect()), layoutMetrics(m_data, m_style));
  // Long class names in a small view leave too little grid: fall back to class numbers
  // (the tooltip still names them).
  if (m_layout.grid.width() < 0.45 * width() && !m_data.classOf.empty()) {
    m_style.indexLabels = true;
    const HeatmapLayout numbered = computeLayout(QRectF(rect()), layoutMetrics(m_data, m_style));
    if (numbered.grid.width() > m_layout.grid.width() * 1.15)
      m_layout = numbered;
    else
      m_style.indexLabels = false;
  }
  m_view.classes = m_data.classes;
  m_view.grid = m_layout.grid;
  m_view.clamp();
}

void HeatmapView::resizeEvent(QResizeEvent*) {
  relayout();
}

void HeatmapView::paintEvent(QPaintEvent*) {
  ++m_paints;
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  if (m_data.classes <= 0) {
    p.setPen(Qt::gray);
    const QString text = m_data.emptyText.isEmpty() ? tr("No data") : m_data.emptyText;
    const QString title =
        m_data.title.isEmpty() ? QString() : m_data.title + QStringLiteral("\n\n");
    p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, title + text);
    return;
  }
  PaintState state;
  state.image = &m_image;
  const double scale = devicePixelRatioF();
  if (needsPooling(m_view, scale)) {
    // Rebuilt only when the visible cells, the size or the data change, not on hover.
    const QString key = QStringLiteral("%1 %2 %3 %4 %5 %6")
                            .arg(m_view.zoom)
                            .arg(m_view.origin.x())
                            .arg(m_view.origin.y())
                            .arg(m_view.grid.width())
                            .arg(m_view.grid.height())
                            .arg(m_image.cacheKey());
    if (key != m_pooledKey) {
      m_pooled = pooledImageFor(m_data, m_style, m_view, scale);
      m_pooledKey = key;
    }
    state.pooled = &m_pooled;
  }
  state.hover = m_hover;
  paintHeatmap(p, m_data, m_style, m_layout, m_view, state);
  if (hasFocus()) {
    p.setPen(QPen(palette().highlight().color(), 1, Qt::DotLine));
    p.drawRect(rect().adjusted(0, 0, -1, -1));
  }
}

bool HeatmapView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip && m_tooltip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QPointF pos = help->pos();
    QString text;
    QRect area;
    if (const auto cell = m_view.cellAt(pos)) {
      text = m_tooltip(cell->row, cell->col);
      area = m_view.cellRect(*cell).toAlignedRect();
    } else if (m_layout.rowSums.contains(pos)) {
      if (const auto row = m_view.rowAt(pos.y())) text = m_tooltip(*row, -1);
    }
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this, area);
    return true;
  }
  return QWidget::event(e);
}

void HeatmapView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton) {
    m_dragFrom = e->position();
    m_dragged = false;
  }
}

void HeatmapView::mouseMoveEvent(QMouseEvent* e) {
  if (m_dragFrom && (e->buttons() & Qt::LeftButton)) {
    const QPointF delta = e->position() - *m_dragFrom;
    if (m_dragged || delta.manhattanLength() > 4) {
      m_dragged = true;
      m_view.panBy(delta);
      m_dragFrom = e->position();
      update();
      return;
    }
  }
  const auto cell = m_view.cellAt(e->position());
  if (cell != m_hover) {
    m_hover = cell;
    update();
  }
}

void HeatmapView::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton && !m_dragged) {
    if (const auto cell = m_view.cellAt(e->position())) emit cellClicked(cell->row, cell->col);
  }
  m_dragFrom.reset();
  m_dragged = false;
}

void HeatmapView::mouseDoubleClickEvent(QMouseEvent*) {
  resetZoom();
}

void HeatmapView::wheelEvent(QWheelEvent* e) {
  const double steps = e->angleDelta().y() / 120.0;
  if (steps == 0) return;
  m_view.zoomAt(e->position(), std::pow(1.25, steps));
  update();
  e->accept();
}

void HeatmapView::contextMenuEvent(QContextMenuEvent* e) {
  QMenu menu(this);
  menu.addAction(tr("Export this view…"), this, &HeatmapView::exportRequested);
  menu.addAction(tr("Reset zoom"), this, &HeatmapView::resetZoom);
  menu.exec(e->globalPos());
}

void HeatmapView::leaveEvent(QEvent*) {
  if (m_hover) {
    m_hover.reset();
    update();
  }
}

}  // namespace shardlens::ui

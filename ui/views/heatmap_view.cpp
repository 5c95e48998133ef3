#include "ui/views/heatmap_view.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "ui/render/heatmap_painter.h"

namespace shardlens::ui {

using namespace shardlens::render;

HeatmapView::HeatmapView(QWidget* parent)
    : QWidget(parent), m_data(std::make_shared<const HeatmapData>()) {
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setFocusPolicy(Qt::StrongFocus);  // Tab reaches every view for keyboard navigation
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void HeatmapView::setData(HeatmapData data) {
  setData(std::make_shared<const HeatmapData>(std::move(data)));
}

void HeatmapView::setData(std::shared_ptr<const HeatmapData> data) {
  // The same prepared data again (a rank's map kept through a sync toggle): its cached
  // images, zoom and hover stay.
  if (data == m_data) return;
  const bool sameShape = data->classes == m_data->classes;
  m_data = std::move(data);
  m_image = QImage();
  ++m_generation;
  m_metrics[0].reset();
  m_metrics[1].reset();
  if (!sameShape) m_view.reset();
  m_hover.reset();
  relayout();
  updateGeometry();  // the minimum follows the labels and sums
  update();
}

void HeatmapView::setStyle(const HeatmapStyle& style) {
  if (style.colormap != m_style.colormap || style.scale != m_style.scale) {
    m_image = QImage();
    ++m_generation;
  }
  m_style = style;
  m_metrics[0].reset();
  m_metrics[1].reset();
  relayout();
  updateGeometry();
  update();
}

const LayoutMetrics& HeatmapView::metrics(bool indexLabels) const {
  std::optional<LayoutMetrics>& cached = m_metrics[indexLabels ? 1 : 0];
  if (!cached) {
    HeatmapStyle s = m_style;
    s.indexLabels = indexLabels;
    cached = layoutMetrics(*m_data, s);
  }
  return *cached;
}

const QImage& HeatmapView::cellImage() {
  if (m_image.isNull()) m_image = buildHeatmapImage(*m_data, m_style);
  return m_image;
}

void HeatmapView::resetZoom() {
  m_view.reset();
  update();
}

QSize HeatmapView::sizeHint() const {
  return m_style.compact ? QSize(240, 240) : QSize(400, 400);
}
QSize HeatmapView::minimumSizeHint() const {
  // Everything around the grid whole (class numbers for labels, as relayout() falls back to)
  // plus a grid that still reads: below this the panel scrolls rather than shrinking the
  // grid to a sliver under a cut "Predicted".
  const LayoutMetrics& m = metrics(true);
  const auto g = [&m](double size) { return size > 0 ? size + m.gap : 0.0; };
  const double grid = m_style.compact ? kMinCompactGrid : kMinGrid;
  const double w =
      2 * m.margin + g(m.axisTitle) + g(m.rowLabels) + g(m.rowSums) + g(m.colorBar) + grid;
  const double h =
      2 * m.margin + g(m.title) + g(m.colSums) + g(m.colLabels) + g(m.axisTitle) + grid;
  return {int(std::ceil(w)), int(std::ceil(h))};
}

int HeatmapView::idealHeight(int width) const {
  const LayoutMetrics& m = metrics(m_style.indexLabels);
  const auto g = [&m](double size) { return size > 0 ? size + m.gap : 0.0; };
  const double side =
      width - 2 * m.margin - g(m.axisTitle) - g(m.rowLabels) - g(m.rowSums) - g(m.colorBar);
  const double extra = 2 * m.margin + g(m.title) + g(m.colSums) + g(m.colLabels) + g(m.axisTitle);
  return int(std::ceil(std::max(side, 60.0) + extra));
}

void HeatmapView::relayout() {
  m_style.indexLabels = false;
  m_layout = computeLayout(QRectF(rect()), metrics(false));
  // Long class names in a small view leave too little grid: fall back to class numbers
  // (the tooltip still names them).
  if (m_layout.grid.width() < 0.45 * width() && !m_data->classOf.empty()) {
    m_style.indexLabels = true;
    const HeatmapLayout numbered = computeLayout(QRectF(rect()), metrics(true));
    if (numbered.grid.width() > m_layout.grid.width() * 1.15)
      m_layout = numbered;
    else
      m_style.indexLabels = false;
  }
  m_view.classes = m_data->classes;
  m_view.grid = m_layout.grid;
  m_view.clamp();
}

void HeatmapView::resizeEvent(QResizeEvent*) {
  relayout();
}

void HeatmapView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  if (m_data->classes <= 0) {
    p.setPen(Qt::gray);
    const QString text = m_data->emptyText.isEmpty() ? tr("No data") : m_data->emptyText;
    const QString title =
        m_data->title.isEmpty() ? QString() : m_data->title + QStringLiteral("\n\n");
    p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, title + text);
    return;
  }
  PaintState state;
  const double scale = devicePixelRatioF();
  if (!needsPooling(m_view, scale)) state.image = &cellImage();
  if (needsPooling(m_view, scale)) {
    // Rebuilt only when the visible cells, the size or the data change, not on hover.
    const QString key = QStringLiteral("%1 %2 %3 %4 %5 %6")
                            .arg(m_view.zoom)
                            .arg(m_view.origin.x())
                            .arg(m_view.origin.y())
                            .arg(m_view.grid.width())
                            .arg(m_view.grid.height())
                            .arg(m_generation);
    if (key != m_pooledKey) {
      m_pooled = pooledImageFor(*m_data, m_style, m_view, scale);
      m_pooledKey = key;
    }
    state.pooled = &m_pooled;
  }
  state.hover = m_hover;
  paintHeatmap(p, *m_data, m_style, m_layout, m_view, state);
  if (hasFocus()) {
    p.setPen(QPen(palette().highlight().color(), 1, Qt::DotLine));
    p.drawRect(rect().adjusted(0, 0, -1, -1));
  }
}

bool HeatmapView::event(QEvent* e) {
  // Esc is the window's Cancel shortcut; with a keyboard cursor shown it drops the cursor.
  if (e->type() == QEvent::ShortcutOverride && m_hover &&
      static_cast<QKeyEvent*>(e)->key() == Qt::Key_Escape) {
    e->accept();
    return true;
  }
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
    m_keyboardCursor = false;
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

void HeatmapView::keyPressEvent(QKeyEvent* e) {
  if (m_data->classes <= 0) return QWidget::keyPressEvent(e);
  const int last = m_data->classes - 1;
  const int page = m_view.cellsAcross();
  const bool ctrl = e->modifiers() & Qt::ControlModifier;
  const Cell at = m_hover.value_or(Cell{});
  // The first navigation key shows the cursor where it is (the top-left cell) before moving.
  const auto go = [&](int rows, int cols) {
    moveCursorTo(m_hover ? stepCell(at, rows, cols, m_data->classes) : at);
  };
  switch (e->key()) {
    case Qt::Key_Left:
      return go(0, -1);
    case Qt::Key_Right:
      return go(0, 1);
    case Qt::Key_Up:
      return go(-1, 0);
    case Qt::Key_Down:
      return go(1, 0);
    case Qt::Key_PageUp:
      return go(-page, 0);
    case Qt::Key_PageDown:
      return go(page, 0);
    case Qt::Key_Home:
      return moveCursorTo(Cell{ctrl ? 0 : at.row, 0});
    case Qt::Key_End:
      return moveCursorTo(Cell{ctrl ? last : at.row, last});
    case Qt::Key_Return:
    case Qt::Key_Enter:
    case Qt::Key_Space:
      if (m_hover) emit cellClicked(m_hover->row, m_hover->col);
      return;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_Minus:
      m_view.zoomAt(m_view.cellRect(at).center(), e->key() == Qt::Key_Minus ? 0.8 : 1.25);
      if (m_hover) m_view.ensureVisible(*m_hover);
      return update();
    case Qt::Key_0:
      return resetZoom();
    case Qt::Key_Escape:
      if (!m_hover) break;
      m_hover.reset();
      QToolTip::hideText();
      return update();
    default:
      break;
  }
  QWidget::keyPressEvent(e);
}

void HeatmapView::focusClasses(int trueClass, int predClass) {
  const std::vector<int>& classOf = m_data->classOf;
  const auto position = [&](int cls) {
    const auto it = std::find(classOf.begin(), classOf.end(), cls);
    return it == classOf.end() ? -1 : int(it - classOf.begin());
  };
  const Cell cell{position(trueClass), position(predClass)};
  if (cell.row < 0 || cell.col < 0) return;
  // At 1000 classes a cell is below a pixel: zoom until it is about 12 px across.
  constexpr double kReadableCell = 12.0;
  if (m_view.cellWidth() > 0 && m_view.cellWidth() < kReadableCell) {
    const double factor =
        std::min(kReadableCell / m_view.cellWidth(), m_view.maxZoom() / m_view.zoom);
    if (factor > 1) m_view.zoomAt(m_view.cellRect(cell).center(), factor);
  }
  moveCursorTo(cell);
}

void HeatmapView::moveCursorTo(const Cell& cell) {
  m_hover = cell;
  m_keyboardCursor = true;
  m_view.ensureVisible(cell);
  update();
  if (!m_tooltip) return;
  const QRect area = m_view.cellRect(cell).toAlignedRect();
  const QString text = m_tooltip(cell.row, cell.col);
  if (!text.isEmpty()) QToolTip::showText(mapToGlobal(area.bottomRight()), text, this, area);
}

void HeatmapView::leaveEvent(QEvent*) {
  // The cursor's own tooltip may pop up under the mouse; that leave keeps the keyboard cursor.
  if (m_hover && !m_keyboardCursor) {
    m_hover.reset();
    update();
  }
}

}  // namespace shardlens::ui

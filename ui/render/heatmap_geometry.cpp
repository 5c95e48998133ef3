#include "ui/render/heatmap_geometry.h"

#include <algorithm>
#include <cmath>

namespace shardlens::render {

HeatmapLayout computeLayout(const QRectF& bounds, const LayoutMetrics& m) {
  HeatmapLayout l;
  l.bounds = bounds;
  const QRectF inner = bounds.adjusted(m.margin, m.margin, -m.margin, -m.margin);
  const auto g = [&m](double size) { return size > 0 ? size + m.gap : 0.0; };
  const double left = g(m.axisTitle) + g(m.rowLabels);
  const double right = g(m.rowSums) + g(m.colorBar);
  const double top = g(m.title);
  const double bottom = g(m.colSums) + g(m.colLabels) + g(m.axisTitle);
  const double across = inner.width() - left - right, down = inner.height() - top - bottom;
  const double side = std::max(0.0, std::min(across, down));  // the grid's width
  // Height beyond the square only where the bounds have it to spare, up to maxAspect.
  const double tall = std::clamp(down, side, side * std::max(1.0, m.maxAspect));
  const double x0 = inner.left() + left;
  const double y0 = inner.top() + top;
  l.grid = QRectF(x0, y0, side, tall);
  l.title = QRectF(inner.left(), inner.top(), inner.width(), m.title);
  l.rowLabels = QRectF(x0 - g(m.rowLabels), y0, m.rowLabels, tall);
  l.yTitle = QRectF(inner.left(), y0, m.axisTitle, tall);
  l.colSums = QRectF(x0, y0 + tall + m.gap, side, m.colSums);
  const double labelsTop = y0 + tall + g(m.colSums) + (m.colSums > 0 ? 0 : m.gap);
  l.colLabels = QRectF(x0, labelsTop, side, m.colLabels);
  l.xTitle = QRectF(x0, labelsTop + g(m.colLabels), side, m.axisTitle);
  l.rowSums = QRectF(x0 + side + m.gap, y0, m.rowSums, tall);
  l.colorBar = QRectF(x0 + side + m.gap + g(m.rowSums), y0, m.colorBar, tall);
  l.colLabelsAcross = m.colLabelsAcross;
  return l;
}

double HeatmapViewport::cellWidth() const {
  return classes > 0 ? grid.width() / classes * zoom : 0.0;
}
double HeatmapViewport::cellHeight() const {
  return classes > 0 ? grid.height() / classes * zoom : 0.0;
}
double HeatmapViewport::maxZoom() const {
  return std::max(1.0, classes / 4.0);
}

QPointF HeatmapViewport::toScreen(double col, double row) const {
  return {grid.left() + (col - origin.x()) * cellWidth(),
          grid.top() + (row - origin.y()) * cellHeight()};
}

QPointF HeatmapViewport::toMatrix(const QPointF& p) const {
  if (cellWidth() <= 0 || cellHeight() <= 0) return {};
  return {origin.x() + (p.x() - grid.left()) / cellWidth(),
          origin.y() + (p.y() - grid.top()) / cellHeight()};
}

std::optional<int> HeatmapViewport::rowAt(double y) const {
  if (classes <= 0 || y < grid.top() || y >= grid.bottom()) return std::nullopt;
  const int row = static_cast<int>(std::floor(toMatrix({grid.left(), y}).y()));
  if (row < 0 || row >= classes) return std::nullopt;
  return row;
}

std::optional<int> HeatmapViewport::colAt(double x) const {
  if (classes <= 0 || x < grid.left() || x >= grid.right()) return std::nullopt;
  const int col = static_cast<int>(std::floor(toMatrix({x, grid.top()}).x()));
  if (col < 0 || col >= classes) return std::nullopt;
  return col;
}

std::optional<Cell> HeatmapViewport::cellAt(const QPointF& p) const {
  const auto row = rowAt(p.y());
  const auto col = colAt(p.x());
  if (!row || !col) return std::nullopt;
  return Cell{*row, *col};
}

QRectF HeatmapViewport::cellRect(const Cell& c) const {
  return QRectF(toScreen(c.col, c.row), QSizeF(cellWidth(), cellHeight()));
}

VisibleRange HeatmapViewport::visible() const {
  VisibleRange v;
  if (classes <= 0 || cellWidth() <= 0) return v;
  const QPointF a = toMatrix(grid.topLeft());
  const QPointF b = toMatrix(grid.bottomRight());
  const auto lo = [this](double x) {
    return std::clamp(static_cast<int>(std::floor(x)), 0, classes - 1);
  };
  // A cell whose left edge sits exactly on the grid's right edge is not visible.
  const auto hi = [this](double x) {
    return std::clamp(static_cast<int>(std::ceil(x)) - 1, 0, classes - 1);
  };
  v.firstCol = lo(a.x());
  v.lastCol = hi(b.x());
  v.firstRow = lo(a.y());
  v.lastRow = hi(b.y());
  return v;
}

void HeatmapViewport::zoomAt(const QPointF& anchor, double factor) {
  if (classes <= 0 || !(factor > 0)) return;
  const QPointF m = toMatrix(anchor);
  zoom = std::clamp(zoom * factor, 1.0, maxZoom());
  // Solve origin so that toMatrix(anchor) == m under the new zoom.
  origin = QPointF(m.x() - (anchor.x() - grid.left()) / cellWidth(),
                   m.y() - (anchor.y() - grid.top()) / cellHeight());
  clamp();
}

void HeatmapViewport::panBy(const QPointF& pixels) {
  if (cellWidth() <= 0 || cellHeight() <= 0) return;
  origin -= QPointF(pixels.x() / cellWidth(), pixels.y() / cellHeight());
  clamp();
}

void HeatmapViewport::reset() {
  zoom = 1.0;
  origin = {};
}

void HeatmapViewport::clamp() {
  const double span = classes / zoom;  // cells visible across the grid
  const double maxOrigin = std::max(0.0, classes - span);
  origin.setX(std::clamp(origin.x(), 0.0, maxOrigin));
  origin.setY(std::clamp(origin.y(), 0.0, maxOrigin));
}

void HeatmapViewport::ensureVisible(const Cell& c) {
  const double span = classes / zoom;
  const auto fit = [span](double first, int index) {
    if (index < first) return double(index);
    if (index + 1 > first + span) return index + 1 - span;
    return first;
  };
  origin = QPointF(fit(origin.x(), c.col), fit(origin.y(), c.row));
  clamp();
}

int HeatmapViewport::cellsAcross() const {
  return std::max(1, static_cast<int>(std::floor(classes / zoom)));
}

Cell stepCell(const Cell& from, int rows, int cols, int classes) {
  const int last = std::max(classes - 1, 0);
  return Cell{std::clamp(from.row + rows, 0, last), std::clamp(from.col + cols, 0, last)};
}

int labelStep(double cellSize, double labelSize) {
  if (cellSize <= 0) return 1 << 30;
  int base = 1;
  for (;;) {
    for (int m : {1, 2, 5}) {
      const int step = base * m;
      if (step * cellSize >= labelSize) return step;
    }
    if (base > (1 << 26)) return 1 << 30;
    base *= 10;
  }
}

}  // namespace shardlens::render

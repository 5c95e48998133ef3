#pragma once
// Painting maths of a heatmap as plain structs: where each part goes, which cell is under a
// point, zoom and pan. No painting happens here, so all of it is tested without rendering.
#include <QPointF>
#include <QRectF>
#include <optional>

namespace shardlens::render {

struct Cell {
  int row = 0;  // display position (after class ordering)
  int col = 0;
  bool operator==(const Cell&) const = default;
};

// Sizes of the parts around the grid, in the painter's logical units. A zero size omits
// that part.
struct LayoutMetrics {
  double title = 18;
  double axisTitle = 16;  // "True" on the left, "Predicted" below
  double rowLabels = 60;  // widest class name
  double colLabels = 60;  // class names below the grid, rotated unless colLabelsAcross
  double colSums = 16;    // the column-sum row right below the grid
  double rowSums = 90;    // the row-sum column (observed vs expected)
  double colorBar = 46;   // the colour bar with its tick labels
  double gap = 4;
  double margin = 6;
  // How much taller than wide the grid may grow when the bounds are taller than its width
  // allows (cells then become upright rectangles); 1: always square.
  double maxAspect = 1.0;
  // Column labels read across, unrotated (they fit their columns: class numbers, short
  // names); colLabels is then one line high.
  bool colLabelsAcross = false;
};

struct HeatmapLayout {
  QRectF bounds, title, grid, rowLabels, colLabels, colSums, rowSums, colorBar, xTitle, yTitle;
  bool colLabelsAcross = false;  // as LayoutMetrics::colLabelsAcross
};

// The grid is square (cells are square) and as large as the bounds allow.
HeatmapLayout computeLayout(const QRectF& bounds, const LayoutMetrics& m);

struct VisibleRange {
  int firstRow = 0, lastRow = -1, firstCol = 0, lastCol = -1;  // inclusive
};

// Maps matrix coordinates (column, row in cell units) to the grid rectangle under a zoom
// and a pan. zoom 1 shows the whole matrix; `origin` is the matrix point at the grid's
// top-left corner.
struct HeatmapViewport {
  int classes = 0;
  QRectF grid;
  double zoom = 1.0;
  QPointF origin;

  double cellWidth() const;
  double cellHeight() const;
  double maxZoom() const;  // a cell may grow to a quarter of the grid, at least 1x
  QPointF toScreen(double col, double row) const;
  QPointF toMatrix(const QPointF& p) const;
  std::optional<Cell> cellAt(const QPointF& p) const;
  std::optional<int> rowAt(double y) const;  // for the row-sum column and row labels
  std::optional<int> colAt(double x) const;
  QRectF cellRect(const Cell& c) const;
  VisibleRange visible() const;

  void zoomAt(const QPointF& anchor, double factor);  // the anchor's cell stays put
  void panBy(const QPointF& pixels);
  void reset();
  void clamp();  // keeps the matrix covering the grid
  // Pans the least that shows cell `c` whole (keyboard navigation at a zoom).
  void ensureVisible(const Cell& c);
  // Whole cells across the grid at this zoom (a Page key's step).
  int cellsAcross() const;
};

// `from` moved by (rows, cols), kept inside a classes x classes matrix.
Cell stepCell(const Cell& from, int rows, int cols, int classes);

// Thinning of labels: the smallest step in 1, 2, 5, 10, 20, 50, ... such that labels `step`
// cells apart are at least `labelSize` apart.
int labelStep(double cellSize, double labelSize);

}  // namespace shardlens::render

// Title, axis titles and class labels of a heatmap. Labels are thinned so they never overlap
// (every 1st, 2nd, 5th, 10th, ... class) and follow zoom and pan.
#include <QFontMetricsF>
#include <algorithm>
#include <cmath>

#include "ui/render/heatmap_painter.h"

namespace shardlens::render {

double wrongRowLineCentre(const HeatmapViewport& v, int row, double lineHeight) {
  const double y = v.toScreen(0, row + 0.5).y();
  if (v.grid.height() < lineHeight) return y;
  return std::clamp(y, v.grid.top() + lineHeight / 2, v.grid.bottom() - lineHeight / 2);
}

std::vector<int> labelledWrongRows(const HeatmapData& d, const HeatmapViewport& v,
                                   double lineHeight) {
  std::vector<int> rows;
  if (!d.hasExpectedRows()) return rows;
  const VisibleRange vis = v.visible();
  double lastY = -1e300;
  for (int r = vis.firstRow; r <= vis.lastRow; ++r) {
    if (!d.rowMismatch(r)) continue;
    const double y = v.toScreen(0, r + 0.5).y();
    if (y < v.grid.top() || y > v.grid.bottom()) continue;
    // Lines a line apart where they are drawn, the first and last moved into the grid.
    const double line = wrongRowLineCentre(v, r, lineHeight);
    if (line - lastY < lineHeight) continue;
    rows.push_back(r);
    lastY = line;
  }
  return rows;
}

void paintLabels(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapLayout& l,
                 const HeatmapViewport& v) {
  p.save();
  const QFont font = heatmapFont(s);
  const QFont bold = heatmapFont(s, true);
  const QFontMetricsF fm(font);
  // Title, with the number of wrong rows spelled out so no colour is needed to see it.
  if (l.title.height() > 0) paintTitle(p, d, s, l.title);
  p.setFont(font);
  p.setPen(Qt::black);
  if (l.yTitle.width() > 0) {
    p.save();
    p.translate(l.yTitle.center());
    p.rotate(-90);
    p.drawText(
        QRectF(-l.yTitle.height() / 2, -l.yTitle.width() / 2, l.yTitle.height(), l.yTitle.width()),
        Qt::AlignCenter, d.yLabel);
    p.restore();
  }
  if (l.xTitle.height() > 0) p.drawText(l.xTitle, Qt::AlignCenter, d.xLabel);

  const VisibleRange vis = v.visible();
  const int rowStep = labelStep(v.cellHeight(), fm.height() * 0.95);
  p.save();
  p.setClipRect(l.rowLabels.adjusted(-2, -fm.height(), 2, fm.height()));
  // Wrong rows are always named, thinned or not; a thinned label that would overlap one
  // gives way.
  const std::vector<int> wrongRows =
      rowStep > 1 ? labelledWrongRows(d, v, fm.height()) : std::vector<int>{};
  std::vector<double> wrongY;
  for (int r : wrongRows) wrongY.push_back(wrongRowLineCentre(v, r, fm.height()));
  const auto nearWrong = [&](double y) {
    return std::any_of(wrongY.begin(), wrongY.end(),
                       [&](double w) { return std::abs(w - y) < fm.height(); });
  };
  std::vector<int> rows;
  for (int r = vis.firstRow - vis.firstRow % rowStep; r <= vis.lastRow; r += rowStep)
    if (r >= vis.firstRow && !nearWrong(v.toScreen(0, r + 0.5).y())) rows.push_back(r);
  const size_t thinned = rows.size();
  rows.insert(rows.end(), wrongRows.begin(), wrongRows.end());
  for (size_t k = 0; k < rows.size(); ++k) {
    const int r = rows[k];
    const double y =
        k < thinned ? v.toScreen(0, r + 0.5).y() : wrongY[k - thinned];  // beside its sums
    if (y < l.grid.top() || y > l.grid.bottom()) continue;
    const bool wrong = d.rowMismatch(r);
    p.setFont(wrong ? bold : font);
    p.setPen(wrong ? QColor(kMismatchInk) : QColor(Qt::black));
    const QRectF box(l.rowLabels.left(), y - fm.height() / 2, l.rowLabels.width() - 3, fm.height());
    p.drawText(box, Qt::AlignRight | Qt::AlignVCenter,
               fm.elidedText(d.label(r, s.indexLabels), Qt::ElideRight, box.width()));
  }
  p.restore();

  const int colStep = labelStep(v.cellWidth(), fm.height() * 0.95);
  p.setFont(font);
  p.setPen(Qt::black);
  for (int c = vis.firstCol - vis.firstCol % colStep; c <= vis.lastCol; c += colStep) {
    if (c < vis.firstCol) continue;
    const double x = v.toScreen(c + 0.5, 0).x();
    if (x < l.grid.left() || x > l.grid.right()) continue;
    if (l.colLabelsAcross) {
      // Short labels (class numbers) read across, centred under their column.
      const double w = v.cellWidth() * colStep;
      p.drawText(QRectF(x - w / 2, l.colLabels.top(), w, l.colLabels.height()),
                 Qt::AlignHCenter | Qt::AlignBottom, d.label(c, s.indexLabels));
      continue;
    }
    p.save();
    // Rotated so names read upwards, ending just under the grid.
    p.translate(x, l.colLabels.top() + 2);
    p.rotate(-90);
    const QRectF box(-l.colLabels.height() + 2, -fm.height() / 2, l.colLabels.height() - 2,
                     fm.height());
    p.drawText(box, Qt::AlignRight | Qt::AlignVCenter,
               fm.elidedText(d.label(c, s.indexLabels), Qt::ElideRight, box.width()));
    p.restore();
  }
  p.restore();
}

}  // namespace shardlens::render

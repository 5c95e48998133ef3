// Title, axis titles and class labels of a heatmap. Labels are thinned so they never overlap
// (every 1st, 2nd, 5th, 10th, ... class) and follow zoom and pan; wrong rows are named
// whatever the thinning, the worst of them where not all fit.
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

QFont rowFont(const HeatmapStyle& s, double rowHeight, bool bold) {
  const QFont full = heatmapFont(s, bold);
  const auto fits = [rowHeight](const QFont& f) {
    return QFontMetricsF(f).height() * 0.95 <= rowHeight;
  };
  // Measured at most twice on a view of thin rows (1000 classes), repainted often.
  if (fits(full)) return full;
  QFont smaller = full;
  smaller.setPixelSize(kSmallestRowFontPixels);
  if (full.pixelSize() <= kSmallestRowFontPixels || !fits(smaller)) return full;
  for (int px = full.pixelSize() - 1; px > kSmallestRowFontPixels; --px) {
    QFont f = full;
    f.setPixelSize(px);
    if (fits(f)) return f;
  }
  return smaller;
}

std::vector<int> labelledWrongRows(const HeatmapData& d, const HeatmapViewport& v,
                                   double lineHeight, int* unlabelled) {
  std::vector<int> rows;
  if (unlabelled) *unlabelled = 0;
  if (!d.hasExpectedRows()) return rows;
  const VisibleRange vis = v.visible();
  // The visible wrong rows, the worst (largest |row sum − true count|) first: when their
  // lines do not all fit, the worst are named, not whichever come first from the top (at
  // 1000 classes that was an uneven sample: rows 0, 64, 107, ...).
  std::vector<int> wrong;
  for (int r = vis.firstRow; r <= vis.lastRow; ++r) {
    if (!d.rowMismatch(r)) continue;
    const double y = v.toScreen(0, r + 0.5).y();
    if (y >= v.grid.top() && y <= v.grid.bottom()) wrong.push_back(r);
  }
  const auto error = [&d](int r) {
    return std::abs(d.rowObserved[size_t(r)] - d.rowExpected[size_t(r)]);
  };
  std::stable_sort(wrong.begin(), wrong.end(), [&](int a, int b) { return error(a) > error(b); });
  // Lines a line apart where they are drawn, the first and last moved into the grid.
  std::vector<double> lines;
  for (int r : wrong) {
    const double line = wrongRowLineCentre(v, r, lineHeight);
    const bool free = std::none_of(lines.begin(), lines.end(), [&](double other) {
      return std::abs(other - line) < lineHeight - 1e-9;
    });
    if (!free) continue;
    rows.push_back(r);
    lines.push_back(line);
  }
  std::sort(rows.begin(), rows.end());
  if (unlabelled) *unlabelled = int(wrong.size() - rows.size());
  return rows;
}

QString moreWrongRowsText(int unlabelled) {
  return unlabelled == 1 ? QStringLiteral("+1 more wrong row, not named")
                         : QStringLiteral("+%1 more wrong rows, not named").arg(unlabelled);
}

void paintLabels(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapLayout& l,
                 const HeatmapViewport& v) {
  p.save();
  const QFont font = heatmapFont(s);
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
  // Row labels in a smaller font where that fits every row (a small view of 10 classes).
  const QFont rowLabelFont = rowFont(s, v.cellHeight());
  const QFont rowLabelBold = rowFont(s, v.cellHeight(), true);
  const QFontMetricsF rowFm(rowLabelFont);
  const int rowStep = labelStep(v.cellHeight(), rowFm.height() * 0.95);
  p.save();
  p.setClipRect(l.rowLabels.adjusted(-2, -rowFm.height(), 2, rowFm.height()));
  // Wrong rows are always named, thinned or not (the worst where not all fit); a thinned
  // label that would overlap one gives way.
  const std::vector<int> wrongRows =
      rowStep > 1 ? labelledWrongRows(d, v, rowFm.height()) : std::vector<int>{};
  std::vector<double> wrongY;
  for (int r : wrongRows) wrongY.push_back(wrongRowLineCentre(v, r, rowFm.height()));
  const auto nearWrong = [&](double y) {
    return std::any_of(wrongY.begin(), wrongY.end(),
                       [&](double w) { return std::abs(w - y) < rowFm.height(); });
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
    p.setFont(wrong ? rowLabelBold : rowLabelFont);
    p.setPen(wrong ? QColor(kMismatchInk) : QColor(Qt::black));
    const QRectF box(l.rowLabels.left(), y - rowFm.height() / 2, l.rowLabels.width() - 3,
                     rowFm.height());
    p.drawText(box, Qt::AlignRight | Qt::AlignVCenter,
               rowFm.elidedText(d.label(r, s.indexLabels), Qt::ElideRight, box.width()));
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

// The row-sum column (observed vs expected, mismatches marked by fill, icon and "≠" text)
// and the column-sum row under the grid. Sums print as integers when they are (counts) and
// with decimals otherwise (normalize-then-sum, float counters).
#include <QFontMetricsF>
#include <QPainterPath>
#include <algorithm>
#include <vector>

#include "ui/render/heatmap_painter.h"

namespace shardlens::render {

void paintWarningIcon(QPainter& p, const QRectF& r) {
  const double side = std::min(r.width(), r.height());
  const QRectF box(r.center().x() - side / 2, r.center().y() - side / 2, side, side);
  QPainterPath tri;
  tri.moveTo(box.center().x(), box.top() + side * 0.05);
  tri.lineTo(box.right() - side * 0.03, box.bottom() - side * 0.08);
  tri.lineTo(box.left() + side * 0.03, box.bottom() - side * 0.08);
  tri.closeSubpath();
  p.save();
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setPen(QPen(QColor(kMismatchInk), std::max(1.0, side / 12)));
  p.setBrush(QColor(255, 214, 0));
  p.drawPath(tri);
  p.setPen(QPen(Qt::black, std::max(1.2, side / 9), Qt::SolidLine, Qt::RoundCap));
  const double cx = box.center().x();
  p.drawLine(QPointF(cx, box.top() + side * 0.35), QPointF(cx, box.top() + side * 0.62));
  p.drawPoint(QPointF(cx, box.top() + side * 0.76));
  p.restore();
}

void paintSums(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapLayout& l,
               const HeatmapViewport& v) {
  const QFont font = heatmapFont(s);
  const QFontMetricsF fm(font);
  const VisibleRange vis = v.visible();
  const double ch = v.cellHeight(), cw = v.cellWidth();
  if (!s.showSums) return;
  p.save();
  p.setFont(font);
  // Row sums in the row labels' font: smaller where that fits every row (heatmap_labels).
  const QFont sumFont = rowFont(s, ch);
  const QFontMetricsF rowFm(sumFont);
  const bool readable = ch >= rowFm.height() * 0.9;
  // Rows too thin for their sums: the wrong ones still get theirs, on a line of their own.
  int unlabelled = 0;
  const std::vector<int> wrongRows =
      readable ? std::vector<int>{} : labelledWrongRows(d, v, rowFm.height(), &unlabelled);
  // Column sums, only when every visible one fits.
  // (Columns narrower than a digit fit none: not measured, which at C = 1000 costs a frame.)
  const bool colSums = l.colSums.height() > 0 && !d.colObserved.empty() &&
                       fm.horizontalAdvance(QStringLiteral("0")) + 2 <= cw &&
                       widestNumberText(font, {&d.colObserved}, size_t(std::max(0, vis.firstCol)),
                                        size_t(vis.lastCol + 1), d.diverging) +
                               2 <=
                           cw;
  // Headers of the sum bands, on the column-sum row; never one without values beside it.
  p.setPen(QColor(80, 80, 80));
  if (l.rowSums.width() > 0 && l.colSums.height() > 0 && (readable || !wrongRows.empty())) {
    const QRectF head(l.rowSums.left(), l.colSums.top(), l.rowSums.width(), l.colSums.height());
    p.drawText(head, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("Σ row"));
  }
  if (colSums) {
    const QRectF left(l.rowLabels.left(), l.colSums.top(), l.rowLabels.width() - 3,
                      l.colSums.height());
    p.drawText(left, Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("Σ col"));
  }
  // The wrong rows left without a label, counted on the column-sum row (empty when rows
  // are this thin: columns are too), from under the row labels along the grid's foot.
  if (unlabelled > 0 && !colSums && l.colSums.height() > 0) {
    p.setPen(QColor(kMismatchInk));
    const QRectF note(l.rowLabels.left(), l.colSums.top(), l.grid.right() - l.rowLabels.left(),
                      l.colSums.height());
    p.drawText(note, Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(moreWrongRowsText(unlabelled), Qt::ElideRight, note.width()));
  }
  // Row sums.
  p.setFont(sumFont);
  p.setClipRect(l.rowSums.adjusted(0, -1, 1, 1));
  const double icon = std::min(rowFm.height(), std::max(ch - 2, 0.0));
  for (int r = vis.firstRow; r <= vis.lastRow; ++r) {
    const QPointF a = v.toScreen(0, r);
    // Tiny rows still get a visible band of at least 2 px when wrong.
    QRectF band(l.rowSums.left(), a.y(), l.rowSums.width(), std::max(ch, 2.0));
    const bool wrong = d.rowMismatch(r);
    if (wrong) p.fillRect(band, QColor(kMismatchFill));
    if (!readable) {
      if (wrong && ch >= 3) paintWarningIcon(p, QRectF(band.left(), band.top(), ch, ch));
      continue;
    }
    const QString obs = sumText(d, d.rowObserved[size_t(r)]);
    QString text = obs;
    if (wrong) {
      const QString exp = sumText(d, d.rowExpected[size_t(r)]);
      text = s.compact ? obs : obs + QStringLiteral(" ≠ ") + exp;
      paintWarningIcon(p, QRectF(band.left() + 1, band.center().y() - icon / 2, icon, icon));
    } else if (d.hasExpectedRows() && !s.compact) {
      text = obs + QStringLiteral(" ✓");
    }
    p.setPen(wrong ? QColor(kMismatchInk) : QColor(Qt::black));
    // A line high at least (rows are readable from 0.9 lines), so drawText does not cut it.
    const double line = std::max(band.height(), rowFm.height());
    const QRectF textBox(band.left() + icon + 4, band.center().y() - line / 2,
                         band.width() - icon - 6, line);
    p.drawText(textBox, Qt::AlignLeft | Qt::AlignVCenter, text);
  }
  // The wrong rows' sums where rows are thin: a line-high band centred on the row. Rows of
  // 3 px and more have their own icon above: the line's text goes beside the icons, without
  // a band or icon of its own covering the neighbouring rows' marks (10 classes in a small
  // view showed 4 of 10 marks, overlapping).
  const bool ownMarks = ch >= 3;
  for (int r : wrongRows) {
    const double h = rowFm.height();
    const double y = wrongRowLineCentre(v, r, h);  // the whole line inside the grid
    const QRectF band(l.rowSums.left(), y - h / 2, l.rowSums.width(), h);
    const double iconWidth = ownMarks ? ch : h;
    if (!ownMarks) {
      p.fillRect(band, QColor(kMismatchFill));
      paintWarningIcon(p, QRectF(band.left() + 1, band.top(), h, h));
    }
    const QString obs = sumText(d, d.rowObserved[size_t(r)]);
    const QString text =
        s.compact ? obs : obs + QStringLiteral(" ≠ ") + sumText(d, d.rowExpected[size_t(r)]);
    p.setPen(QColor(kMismatchInk));
    p.drawText(band.adjusted(iconWidth + 4, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
  }
  p.setClipping(false);
  p.setFont(font);
  if (colSums) {
    // Grey as their "Σ col" header where the class numbers below read across too: a row of
    // sums, not of labels.
    p.setPen(l.colLabelsAcross ? QColor(80, 80, 80) : QColor(Qt::black));
    for (int c = vis.firstCol; c <= vis.lastCol; ++c) {
      const QRectF box(v.toScreen(c, 0).x(), l.colSums.top(), cw, l.colSums.height());
      if (box.center().x() < l.grid.left() || box.center().x() > l.grid.right()) continue;
      p.drawText(box, Qt::AlignCenter, sumText(d, d.colObserved[size_t(c)]));
    }
  }
  p.restore();
}

}  // namespace shardlens::render

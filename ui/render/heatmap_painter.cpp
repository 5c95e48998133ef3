#include "ui/render/heatmap_painter.h"

#include <QFontMetricsF>
#include <algorithm>
#include <cmath>

namespace shardlens::render {

QFont heatmapFont(const HeatmapStyle& s, bool bold) {
  QFont f(QStringLiteral("DejaVu Sans"));
  f.setPixelSize(std::max(6, s.fontPixels));
  f.setBold(bold);
  return f;
}

double widestLabel(const HeatmapData& d, const QFont& font, bool index) {
  if (index && !d.classOf.empty()) {
    const std::vector<double> ids(d.classOf.begin(), d.classOf.end());
    return widestNumberText(font, {&ids});
  }
  return d.nameWidths ? d.nameWidths->widest(font, d.names) : LabelWidths().widest(font, d.names);
}

LayoutMetrics layoutMetrics(const HeatmapData& d, const HeatmapStyle& s, double width) {
  const QFontMetricsF fm(heatmapFont(s));
  const double line = fm.height();
  // Wrong rows' labels are bold. Cap the width so a long name cannot squeeze the grid.
  double names = widestLabel(d, heatmapFont(s, true), s.indexLabels);
  names = std::min(names, 14.0 * s.fontPixels) + 4;
  // The row-label column also carries the "Σ col" header of the column-sum row.
  names = std::max(names, fm.horizontalAdvance(QStringLiteral("Σ col")) + 6);
  LayoutMetrics m;
  m.title = line * (s.compact ? 1.2 : 1.5);
  m.axisTitle = s.compact && !s.axisTitles ? 0 : line;
  m.rowLabels = names;
  m.colLabels = names;
  m.colSums = line;
  // Widest sum text, signs included (the difference view has negative sums).
  const double widestSum = widestNumberText(heatmapFont(s), {&d.rowObserved, &d.rowExpected}, 0,
                                            size_t(-1), d.diverging);
  const double icon = line + 2;
  // "obs ≠ exp" where a row is wrong, else "obs ✓": no room kept for texts never drawn (an
  // expected matrix's 150 rows left a blank band as wide as two sums beside the grid).
  const bool checked = d.hasExpectedRows() && !s.compact;
  m.rowSums = checked && d.mismatchCount() > 0
                  ? icon + 2 * widestSum + fm.horizontalAdvance(QStringLiteral(" ≠ ")) + 8
              : checked ? icon + widestSum + fm.horizontalAdvance(QStringLiteral(" ✓")) + 8
                        : icon + widestSum + 8;
  m.rowSums = std::max(m.rowSums, fm.horizontalAdvance(QStringLiteral("Σ row")) + 4);
  // Bar (12), tick and gap, the widest end label, then the bar's own label.
  const double ticks =
      std::max(fm.horizontalAdvance(colorBarTickText(d, d.valueMax)),
               d.diverging ? fm.horizontalAdvance(colorBarTickText(d, -d.valueMax)) : 0.0);
  m.colorBar = s.showColorBar ? 14 + kColorBarTick + kColorBarTickGap + ticks + 6 +
                                    (colorBarLabel(d, s).isEmpty() ? 0 : line + 2)
                              : 0;
  m.margin = s.compact ? 3 : 6;
  m.maxAspect = s.maxAspect;
  if (!s.showSums) m.rowSums = m.colSums = 0;
  if (width > 0) {
    // Up to three title lines at full size before the title shrinks.
    QFont titleFont = heatmapFont(s, true);
    titleFont.setPixelSize(s.fontPixels + (s.compact ? 0 : 2));
    const double titleLine = QFontMetricsF(titleFont).height();
    const TitleLines t = layoutTitle(d, s, width - 2 * m.margin, 3 * titleLine);
    m.title = std::max(m.title, t.height() + (s.compact ? 2 : 4));
  }
  return m;
}

bool columnLabelsFitAcross(const HeatmapData& d, const HeatmapStyle& s, double gridWidth) {
  if (d.classes <= 0 || gridWidth <= 0) return false;
  const QFont font = heatmapFont(s);
  const double cell = gridWidth / d.classes;
  // The same thinning as rotated labels (a line apart), else they read better rotated.
  return labelStep(cell, widestLabel(d, font, s.indexLabels) + 6) <=
         labelStep(cell, QFontMetricsF(font).height() * 0.95);
}

LayoutMetrics withColumnLabelsAcross(LayoutMetrics m, const HeatmapStyle& s) {
  m.colLabels = QFontMetricsF(heatmapFont(s)).height() + 4;  // set off from the sums above
  m.colLabelsAcross = true;
  return m;
}

LayoutMetrics panelMetrics(const HeatmapData& d, const HeatmapStyle& s, const QRectF& bounds) {
  const LayoutMetrics rotated = layoutMetrics(d, s, bounds.width());
  // Across, the labels take less height and the grid may grow: they must fit at that size.
  const LayoutMetrics across = withColumnLabelsAcross(rotated, s);
  return columnLabelsFitAcross(d, s, computeLayout(bounds, across).grid.width()) ? across : rotated;
}

bool sumsDrawn(const HeatmapData& d, const HeatmapStyle& s, double gridSide) {
  if (d.classes <= 0 || d.mismatchCount() > 0) return true;
  const double ch = gridSide / d.classes;
  return ch >= QFontMetricsF(rowFont(s, ch)).height() * 0.9;
}

bool needsPooling(const HeatmapViewport& v, double scale) {
  return std::min(v.cellWidth(), v.cellHeight()) * scale < 1.0;
}

QImage pooledImageFor(const HeatmapData& d, const HeatmapStyle& s, const HeatmapViewport& v,
                      double scale) {
  const VisibleRange vis = v.visible();
  const QRectF target(v.toScreen(vis.firstCol, vis.firstRow),
                      v.toScreen(vis.lastCol + 1, vis.lastRow + 1));
  const QSize pixels(std::max(1, int(std::ceil(target.width() * scale))),
                     std::max(1, int(std::ceil(target.height() * scale))));
  return buildPooledImage(d, s, vis.firstRow, vis.lastRow - vis.firstRow + 1, vis.firstCol,
                          vis.lastCol - vis.firstCol + 1, pixels);
}

void paintCells(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapViewport& v,
                const QImage* image, const QImage* pooled) {
  const VisibleRange vis = v.visible();
  if (vis.lastRow < vis.firstRow || vis.lastCol < vis.firstCol) return;
  p.save();
  p.setClipRect(v.grid);
  const double scale = p.device() ? p.device()->devicePixelRatioF() * p.transform().m11() : 1.0;
  if (!s.vectorCells && needsPooling(v, scale)) {
    const QImage local = pooled && !pooled->isNull() ? QImage() : pooledImageFor(d, s, v, scale);
    const QImage& img = pooled && !pooled->isNull() ? *pooled : local;
    const QRectF target(v.toScreen(vis.firstCol, vis.firstRow),
                        v.toScreen(vis.lastCol + 1, vis.lastRow + 1));
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(target, img);
  } else if (s.vectorCells) {
    for (int r = vis.firstRow; r <= vis.lastRow; ++r)
      for (int c = vis.firstCol; c <= vis.lastCol; ++c)
        p.fillRect(v.cellRect({r, c}), QColor(cellColor(d, s, d.value(r, c))));
  } else {
    const QImage local = image && !image->isNull() ? QImage() : buildHeatmapImage(d, s);
    const QRect source(vis.firstCol, vis.firstRow, vis.lastCol - vis.firstCol + 1,
                       vis.lastRow - vis.firstRow + 1);
    const QRectF target(v.toScreen(vis.firstCol, vis.firstRow),
                        v.toScreen(vis.lastCol + 1, vis.lastRow + 1));
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(target, image && !image->isNull() ? *image : local, source);
  }
  const double cw = v.cellWidth(), ch = v.cellHeight();
  if (cw >= 8) {
    // Thin separators keep equal neighbouring cells distinguishable.
    p.setPen(QPen(QColor(255, 255, 255, 150), 1));
    for (int c = vis.firstCol + 1; c <= vis.lastCol; ++c) {
      const double x = v.toScreen(c, 0).x();
      p.drawLine(QPointF(x, v.grid.top()), QPointF(x, v.grid.bottom()));
    }
    for (int r = vis.firstRow + 1; r <= vis.lastRow; ++r) {
      const double y = v.toScreen(0, r).y();
      p.drawLine(QPointF(v.grid.left(), y), QPointF(v.grid.right(), y));
    }
  }
  if (s.showValues && cw >= 12 && ch >= 9) {
    QFont f = heatmapFont(s);
    // The widest text among the visible cells (at most a few thousand at this cell size);
    // the colour range alone misleads for fractions (a range of 1 prints "1", cells "0.83").
    QString widest;
    {
      const QFontMetricsF probe(f);
      double best = -1;
      for (int r = vis.firstRow; r <= vis.lastRow; ++r)
        for (int c = vis.firstCol; c <= vis.lastCol; ++c) {
          const QString t = cellText(d, d.value(r, c));
          if (t.size() < widest.size()) continue;
          const double w = probe.horizontalAdvance(t);
          if (w > best) {
            best = w;
            widest = t;
          }
        }
    }
    // Shrink the font until the widest value fits, down to a still readable size.
    for (int px = s.fontPixels; px >= 7; --px) {
      f.setPixelSize(px);
      const QFontMetricsF fm(f);
      if (fm.horizontalAdvance(widest) + 3 <= cw && fm.height() <= ch + 1) break;
    }
    const QFontMetricsF fm(f);
    if (fm.horizontalAdvance(widest) + 3 <= cw && fm.height() <= ch + 2) {
      p.setFont(f);
      for (int r = vis.firstRow; r <= vis.lastRow; ++r)
        for (int c = vis.firstCol; c <= vis.lastCol; ++c) {
          const double val = d.value(r, c);
          p.setPen(textColorOn(cellColor(d, s, val)));
          p.drawText(v.cellRect({r, c}), Qt::AlignCenter, cellText(d, val));
        }
    }
  }
  // Mismatching rows get a dashed outline: a shape cue on top of the row-sum marker, where
  // rows are tall enough to show cells inside it. On thinner rows (150 classes) the dashes
  // of many wrong rows covered the cells; their red labels and sums still mark them.
  if (d.hasExpectedRows() && ch >= kRowOutlineMinPixels) {
    p.setPen(QPen(QColor(kMismatchInk), std::clamp(ch / 8, 1.0, 2.0), Qt::DashLine));
    p.setBrush(Qt::NoBrush);
    for (int r = vis.firstRow; r <= vis.lastRow; ++r)
      if (d.rowMismatch(r)) {
        const QPointF a = v.toScreen(0, r), b = v.toScreen(d.classes, r + 1);
        p.drawRect(QRectF(a, b).adjusted(1, 1, -1, -1));
      }
  }
  p.restore();
}

void paintHeatmap(QPainter& p, const HeatmapData& d, const HeatmapStyle& s,
                  const HeatmapLayout& layout, const HeatmapViewport& view,
                  const PaintState& state) {
  if (d.classes <= 0) return;
  p.save();
  paintCells(p, d, s, view, state.image, state.pooled);
  p.setPen(QPen(QColor(60, 60, 60), 1));
  p.setBrush(Qt::NoBrush);
  p.drawRect(view.grid);
  if (state.hover) {
    const QRectF r = view.cellRect(*state.hover).intersected(view.grid);
    if (!r.isEmpty()) {
      p.setPen(QPen(Qt::white, 3));
      p.drawRect(r);
      p.setPen(QPen(Qt::black, 1.5));
      p.drawRect(r);
    }
  }
  paintLabels(p, d, s, layout, view);
  paintSums(p, d, s, layout, view);
  if (s.showColorBar) paintColorBar(p, d, s, layout.colorBar);
  p.restore();
}

void paintHeatmap(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const QRectF& bounds) {
  const HeatmapLayout layout = computeLayout(bounds, panelMetrics(d, s, bounds));
  HeatmapViewport view;
  view.classes = d.classes;
  view.grid = layout.grid;
  paintHeatmap(p, d, s, layout, view);
}

}  // namespace shardlens::render

// The colour bar: the map as a vertical gradient with the value at its ends and middle
// (for a log scale, the value at the middle of the log range).
#include <QFontMetricsF>
#include <cmath>

#include "ui/render/heatmap_painter.h"

namespace shardlens::render {
namespace {

// Inverse of scaledValue on [0, 1], for tick labels.
double valueAt(const HeatmapData& d, const HeatmapStyle& s, double t) {
  const double top = d.valueMax > 0 ? d.valueMax : 1.0;
  if (!usesLogScale(d, s)) return t * top;
  const double unit = d.integral ? 1.0 : top / 1000.0;
  return std::expm1(t * std::log1p(top / unit)) * unit;
}

}  // namespace

namespace {

// "a, b, c" of the parts that are not empty.
QString joinedParts(std::initializer_list<QString> parts) {
  QString label;
  for (const QString& part : parts)
    if (!part.isEmpty()) label += (label.isEmpty() ? QString() : QStringLiteral(", ")) + part;
  return label;
}

}  // namespace

QString colorBarLabel(const HeatmapData& d, const HeatmapStyle& s) {
  return joinedParts({d.valueLabel, d.rangeNote,
                      usesLogScale(d, s) ? QStringLiteral("log scale") : QString(),
                      zeroIsBlank(d) ? QStringLiteral("white = 0") : QString()});
}

// The colour bar's label at most `length` wide: the whole label where it fits, else shorter
// forms that keep what the ticks cannot say before the quantity's name: which range, then the
// scale (a log bar's middle tick alone does not say it is one: an ADE20K bar at 1280 x 800 read
// "0–33,056,078 per view" and no more), then blank zeros; only then an elided one.
QString fittedColorBarLabel(const HeatmapData& d, const HeatmapStyle& s, const QFontMetricsF& fm,
                            double length) {
  const bool log = usesLogScale(d, s);
  const QString blank = zeroIsBlank(d) ? QStringLiteral("white = 0") : QString();
  const QString scale = log ? QStringLiteral("log scale") : QString();
  const QString shortScale = log ? QStringLiteral("log") : QString();
  const QString forms[] = {
      colorBarLabel(d, s),
      joinedParts({d.rangeNote, scale, blank}),
      joinedParts({d.rangeNote, scale}),
      joinedParts({d.rangeNote, shortScale}),
      log ? scale : d.rangeNote,
  };
  for (const QString& form : forms)
    if (!form.isEmpty() && fm.horizontalAdvance(form) <= length) return form;
  return fm.elidedText(joinedParts({d.rangeNote, shortScale}), Qt::ElideRight, length);
}

QString colorBarTickText(const HeatmapData& d, double value) {
  // Signs explicit on a difference bar, with a true minus: "+56", "0", "−56".
  return cellText(d, value);
}

void paintColorBar(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const QRectF& r) {
  if (r.width() <= 0 || r.height() <= 0) return;
  p.save();
  const QFont font = heatmapFont(s);
  const QFontMetricsF fm(font);
  const QRectF bar(r.left() + 2, r.top() + fm.height() / 2, 10, r.height() - fm.height());
  QImage strip(1, 256, QImage::Format_RGB32);
  for (int k = 0; k < 256; ++k) {
    const double t = 1.0 - k / 255.0;
    strip.setPixel(0, k, d.diverging ? divergingColor(2 * t - 1) : colormapColor(s.colormap, t));
  }
  if (s.vectorCells) {
    // Vector output: stacked rectangles stay sharp where a stretched image would blur.
    const int steps = 64;
    for (int k = 0; k < steps; ++k) {
      const QRectF slice(bar.left(), bar.top() + bar.height() * k / steps, bar.width(),
                         bar.height() / steps + 0.5);
      p.fillRect(slice, QColor(strip.pixel(0, (k * 255 + 127) / steps)));
    }
  } else {
    p.drawImage(bar, strip);
  }
  p.setPen(QPen(QColor(60, 60, 60), 1));
  p.drawRect(bar);
  p.setFont(font);
  p.setPen(Qt::black);
  // Tick labels stop where the bar's own label begins.
  const QString label = colorBarLabel(d, s);
  const double labelRight = label.isEmpty() ? r.right() : r.right() - fm.height() - 2;
  const auto tick = [&](double frac, double value) {
    const double y = bar.bottom() - frac * bar.height();
    p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + kColorBarTick, y));
    // A gap between tick and number, so "−56" cannot read as "--56".
    const double x = bar.right() + kColorBarTick + kColorBarTickGap;
    p.drawText(QRectF(x, y - fm.height() / 2, labelRight - x, fm.height()),
               Qt::AlignLeft | Qt::AlignVCenter, colorBarTickText(d, value));
  };
  if (d.valueMax <= 0) {
    tick(d.diverging ? 0.5 : 0, 0);  // every value 0: no range to mark
  } else if (d.diverging) {
    tick(0, -d.valueMax);
    tick(0.5, 0);
    tick(1, d.valueMax);
  } else {
    tick(0, 0);
    tick(0.5, valueAt(d, s, 0.5));
    tick(1, valueAt(d, s, 1.0));
  }
  if (!label.isEmpty()) {
    // The label reads upwards along the bar, in the strip right of the tick labels.
    const double x = r.right() - fm.height() / 2 - 1;
    const QString text = fittedColorBarLabel(d, s, fm, bar.height());
    p.save();
    p.translate(x, bar.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-bar.height() / 2, -fm.height() / 2, bar.height(), fm.height()),
               Qt::AlignCenter, text);
    p.restore();
  }
  p.restore();
}

}  // namespace shardlens::render

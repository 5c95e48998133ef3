#include "ui/render/drift_figure.h"

#include <QDir>
#include <QFontMetricsF>
#include <algorithm>
#include <cmath>

#include "ui/render/heatmap_geometry.h"
#include "ui/render/heatmap_painter.h"
#include "ui/render/shown_text.h"

namespace shardlens::render {
namespace {

constexpr double kMaxColumnWidth = 64;  // points: a few epochs do not stretch across a page

// The colour bar's stand-in data: signed counts around 0.
HeatmapData barData(const DriftFigure& f) {
  HeatmapData d;
  d.diverging = true;
  d.integral = true;
  d.valueMax = std::max(1.0, f.drift.worst);
  d.valueLabel = QStringLiteral("row sum − true count");
  return d;
}

}  // namespace

DriftColumns driftColumns(const RowDrift& d) {
  DriftColumns out;
  std::vector<QStringList> parts;
  for (const std::string& c : d.columns) parts.push_back(shownText(c).split(QStringLiteral(", ")));
  // The leading parts every column shares ("epoch 1" of one epoch's validations), said once.
  qsizetype common = 0;
  const auto sharedAt = [&](qsizetype i) {
    return std::all_of(parts.begin(), parts.end(), [&](const QStringList& p) {
      return p.size() > i + 1 && p[i] == parts.front()[i];
    });
  };
  while (!parts.empty() && sharedAt(common)) ++common;
  for (const QStringList& p : parts) out.labels.push_back(p.mid(common).join(QStringLiteral(", ")));
  // One word and a number in every label ("validation 2"): numbered under that word.
  const auto wordOf = [](const QString& label) {
    const qsizetype space = label.indexOf(QLatin1Char(' '));
    bool number = false;
    if (space > 0) label.mid(space + 1).toInt(&number);
    return number ? label.left(space) : QString();
  };
  out.word = out.labels.empty() ? QString() : wordOf(out.labels.front());
  const bool numbered =
      !out.word.isEmpty() && std::all_of(out.labels.begin(), out.labels.end(),
                                         [&](const QString& l) { return wordOf(l) == out.word; });
  if (numbered) {
    for (QString& l : out.labels) l = l.mid(out.word.size() + 1);
  } else {
    out.word = QStringLiteral("evaluation");
  }
  out.axisTitle = out.word;
  if (common > 0)
    out.axisTitle += QStringLiteral(" (%1)").arg(parts.front().mid(0, common).join(", "));
  return out;
}

namespace {

QString titleOf(const DriftFigure& f) {
  return f.title.isEmpty()
             ? QStringLiteral("Row sum − true count, by class and epoch (0: the row is right)")
             : f.title;
}

QFont titleFont(const HeatmapStyle& s) {
  QFont font = heatmapFont(s, true);
  font.setPixelSize(s.fontPixels + 2);
  return font;
}

}  // namespace

QStringList driftTitleLines(const DriftFigure& f, const HeatmapStyle& s, double width) {
  // Broken between words as a caption is, so a narrow Charts dock shows the whole title; a
  // word wider than the figure alone is elided.
  const QFontMetricsF fm(titleFont(s));
  QStringList lines;
  QString current;
  for (const QString& word : titleOf(f).split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
    const QString joined = current.isEmpty() ? word : current + QLatin1Char(' ') + word;
    if (current.isEmpty() || fm.horizontalAdvance(joined) <= width) {
      current = joined;
      continue;
    }
    lines << current;
    current = word;
  }
  if (!current.isEmpty()) lines << current;
  for (QString& l : lines) l = fm.elidedText(l, Qt::ElideRight, width);
  return lines;
}

DriftParts driftLayout(const DriftFigure& f, const HeatmapStyle& s, const QRectF& bounds) {
  const QFontMetricsF fm(heatmapFont(s));
  const QFontMetricsF bold(heatmapFont(s, true));
  const double line = fm.height(), margin = 6, gap = 6;
  double names = bold.horizontalAdvance(QStringLiteral("class"));
  for (const QString& n : f.classNames) names = std::max(names, bold.horizontalAdvance(n));
  names = std::min(names, 14.0 * s.fontPixels) + 8;
  const HeatmapData bar = barData(f);
  const double barWidth = layoutMetrics(bar, s).colorBar;
  DriftParts p;
  const double titleWidth = bounds.width() - 2 * margin;
  const double titleLine = QFontMetricsF(titleFont(s)).height();
  const auto titleLines = double(driftTitleLines(f, s, titleWidth).size());
  p.title = QRectF(bounds.left() + margin, bounds.top() + margin, titleWidth,
                   titleLines * titleLine + 0.4 * line);
  const double top = p.title.bottom() + gap;
  const double bottom = bounds.bottom() - margin - 2 * line - gap;  // column labels, x title
  // The y axis title, upright at the far left as on the heatmaps, then the class names.
  p.yTitle = QRectF(bounds.left() + margin, top, line, std::max(1.0, bottom - top));
  const double namesLeft = p.yTitle.right() + 2;
  const double left = namesLeft + names;
  const double room = bounds.right() - margin - barWidth - gap - left;
  const double width =
      std::clamp(kMaxColumnWidth * double(f.drift.columns.size()), std::min(room, 40.0), room);
  p.names = QRectF(namesLeft, top, names - 4, bottom - top);
  p.grid = QRectF(left, top, std::max(1.0, width), std::max(1.0, bottom - top));
  p.columns = QRectF(left, p.grid.bottom() + 2, p.grid.width(), line);
  p.xTitle = QRectF(left, p.columns.bottom(), p.grid.width(), line);
  p.bar = QRectF(p.grid.right() + gap, top, barWidth, p.grid.height());
  return p;
}

namespace {

QString signedCount(double v) {
  return signedValueText(v, true);
}

}  // namespace

std::vector<int> driftNamedRows(const DriftFigure& f, double rowHeight, double lineHeight) {
  std::vector<int> rows;
  const int classes = f.drift.classes;
  if (classes <= 0) return rows;
  if (rowHeight >= lineHeight * 0.95) {
    for (int c = 0; c < classes; ++c) rows.push_back(c);
    return rows;
  }
  // The most drifting first, each kept where it does not overlap one kept before.
  std::vector<double> taken;
  for (int c : f.drift.by_drift) {
    if (int(rows.size()) >= kDriftNamedClasses) break;
    const double y = (c + 0.5) * rowHeight;
    if (std::any_of(taken.begin(), taken.end(),
                    [&](double t) { return std::abs(t - y) < lineHeight; }))
      continue;
    taken.push_back(y);
    rows.push_back(c);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

QImage driftImage(const DriftFigure& f, int pixelRows) {
  const RowDrift& d = f.drift;
  const int columns = int(d.columns.size());
  if (d.classes <= 0 || columns <= 0) return {};
  const int h = std::clamp(pixelRows, 1, d.classes);
  QImage image(columns, h, QImage::Format_RGB32);
  const double top = std::max(1.0, d.worst);
  for (int py = 0; py < h; ++py) {
    const int r0 = int(int64_t(py) * d.classes / h), r1 = int(int64_t(py + 1) * d.classes / h);
    for (int k = 0; k < columns; ++k) {
      double best = 0;
      for (int r = r0; r < r1; ++r)
        if (std::abs(d.at(r, size_t(k))) > std::abs(best)) best = d.at(r, size_t(k));
      image.setPixel(k, py, divergingColor(std::clamp(best / top, -1.0, 1.0)));
    }
  }
  return image;
}

QRectF driftGrid(const DriftFigure& f, const HeatmapStyle& s, const QRectF& bounds) {
  return driftLayout(f, s, bounds).grid;
}

QSizeF driftSizePoints(const DriftFigure& f, const HeatmapStyle& s) {
  // Tall enough for every class to be named up to 40 classes; beyond, a page-like height.
  const double line = QFontMetricsF(heatmapFont(s)).height();
  const double rows = std::clamp(double(f.drift.classes) * line, 12 * line, 40 * line);
  // Laid out on a wide page, the grid takes its columns' width and the bar follows it.
  const DriftParts p = driftLayout(f, s, QRectF(0, 0, 4000, 4000));
  const double titleWidth = QFontMetricsF(titleFont(s)).horizontalAdvance(titleOf(f)) + 12;
  return {std::max(p.bar.right() + 6, titleWidth), rows + 6 * line};
}

void paintDrift(QPainter& p, const DriftFigure& f, const HeatmapStyle& s, const QRectF& bounds) {
  const RowDrift& d = f.drift;
  const DriftParts parts = driftLayout(f, s, bounds);
  const QFont font = heatmapFont(s);
  const QFont bold = heatmapFont(s, true);
  const QFontMetricsF fm(font);
  p.save();
  p.setFont(titleFont(s));
  p.setPen(Qt::black);
  p.drawText(parts.title, Qt::AlignLeft | Qt::AlignVCenter,
             driftTitleLines(f, s, parts.title.width()).join(QLatin1Char('\n')));
  const int columns = int(d.columns.size());
  if (d.classes <= 0 || columns <= 0) {
    p.restore();
    return;
  }
  const QRectF& g = parts.grid;
  const double scale = p.device() ? p.device()->devicePixelRatioF() * p.transform().m11() : 1.0;
  const double rowHeight = g.height() / d.classes, columnWidth = g.width() / columns;
  p.setRenderHint(QPainter::SmoothPixmapTransform, false);
  p.drawImage(g, driftImage(f, int(std::ceil(g.height() * scale))));
  p.setPen(QPen(QColor(60, 60, 60), 1));
  p.drawRect(g);
  // Values on the cells when they fit: the signed deviation.
  p.setFont(font);
  if (rowHeight >= fm.height() && columnWidth >= fm.horizontalAdvance(QStringLiteral("+000")))
    for (int c = 0; c < d.classes; ++c)
      for (int k = 0; k < columns; ++k) {
        const double v = d.at(c, size_t(k));
        const QRectF cell(g.left() + k * columnWidth, g.top() + c * rowHeight, columnWidth,
                          rowHeight);
        p.setPen(textColorOn(divergingColor(std::clamp(v / std::max(1.0, d.worst), -1.0, 1.0))));
        p.drawText(cell, Qt::AlignCenter, signedCount(v));
      }
  // The column shown in the window.
  if (f.highlight >= 0 && f.highlight < columns) {
    p.setPen(QPen(Qt::black, 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(g.left() + f.highlight * columnWidth, g.top(), columnWidth, g.height()));
  }
  // Class names: all when they fit, else the most drifting, bold when their row is wrong.
  for (int c : driftNamedRows(f, rowHeight, fm.height())) {
    const bool wrong = d.ever_wrong(c);
    p.setFont(wrong ? bold : font);
    p.setPen(wrong ? QColor(kMismatchInk) : QColor(Qt::black));
    const double y = g.top() + (c + 0.5) * rowHeight;
    const QString name =
        size_t(c) < f.classNames.size() ? f.classNames[size_t(c)] : QString::number(c);
    p.drawText(QRectF(parts.names.left(), y - fm.height() / 2, parts.names.width(), fm.height()),
               Qt::AlignRight | Qt::AlignVCenter,
               QFontMetricsF(p.font()).elidedText(name, Qt::ElideRight, parts.names.width()));
    if (rowHeight < fm.height()) {  // a leader to the thin row it names
      p.setPen(QPen(QColor(120, 120, 120), 0.8));
      p.drawLine(QPointF(parts.names.right() + 1, y), QPointF(g.left() - 1, y));
    }
  }
  // Column labels, thinned to fit, and the axis title.
  p.setFont(font);
  p.setPen(Qt::black);
  const DriftColumns axis = driftColumns(d);
  double widest = 0;
  for (const QString& label : axis.labels) widest = std::max(widest, fm.horizontalAdvance(label));
  const int step = labelStep(columnWidth, widest + 6);
  for (int k = 0; k < columns; k += step)
    p.drawText(QRectF(g.left() + k * columnWidth, parts.columns.top(), columnWidth,
                      parts.columns.height()),
               Qt::AlignCenter | Qt::TextDontClip, axis.labels[size_t(k)]);
  p.drawText(parts.xTitle, Qt::AlignCenter | Qt::TextDontClip, axis.axisTitle);
  p.save();
  p.translate(parts.yTitle.center());
  p.rotate(-90);
  p.drawText(QRectF(-parts.yTitle.height() / 2, -parts.yTitle.width() / 2, parts.yTitle.height(),
                    parts.yTitle.width()),
             Qt::AlignCenter, kDriftYTitle);
  p.restore();
  paintColorBar(p, barData(f), s, parts.bar);
  p.restore();
}

bool writeDriftFigure(const DriftFigure& f, const QString& dir,
                      const std::vector<FigureFormat>& formats, int dpi, QStringList* written,
                      QString* error) {
  if (!QDir().mkpath(dir)) {
    if (error) *error = dir + QStringLiteral(": cannot create the directory");
    return false;
  }
  const HeatmapStyle style;
  const QSizeF pts = driftSizePoints(f, style);
  std::vector<FigureOutput> outputs;
  for (FigureFormat format : formats)
    outputs.push_back(
        {QDir(dir).filePath(QStringLiteral("drift.") + figureExtension(format)), format});
  const auto paint = [&](std::span<QPainter* const> painters) {
    for (QPainter* p : painters) paintDrift(*p, f, style, QRectF(QPointF(0, 0), pts));
  };
  // The document's title is the painted one (the scenario's caption, from figure_set).
  return writePainted(pts, titleOf(f), paint, outputs, dpi, written, error);
}

}  // namespace shardlens::render

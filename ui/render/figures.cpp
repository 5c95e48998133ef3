#include "ui/render/figures.h"

#include <QFileInfo>
#include <QFontMetricsF>
#include <QImage>
#include <QImageWriter>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>

#include "ui/render/heatmap_painter.h"

namespace shardlens::render {

std::optional<FigureFormat> parseFigureFormat(const QString& text) {
  const QString t = text.trimmed().toLower();
  if (t == QLatin1String("png")) return FigureFormat::Png;
  if (t == QLatin1String("svg")) return FigureFormat::Svg;
  if (t == QLatin1String("pdf")) return FigureFormat::Pdf;
  return std::nullopt;
}

QString figureExtension(FigureFormat f) {
  switch (f) {
    case FigureFormat::Svg:
      return QStringLiteral("svg");
    case FigureFormat::Pdf:
      return QStringLiteral("pdf");
    case FigureFormat::Png:
      break;
  }
  return QStringLiteral("png");
}

namespace {

constexpr double kFigureTitleMin = 24;  // points
constexpr double kMinPanelSide = 48;    // below this a page fit gives up and the page grows

// The panel that sets the grid's size: the first one with cells (a failed rank's panel of a
// run has none, only the reason).
const HeatmapData& sizingPanel(const Figure& f) {
  for (const HeatmapData& d : f.panels)
    if (d.classes > 0) return d;
  return f.panels.front();
}

double naturalSide(const Figure& f) {
  const int c = std::max(1, sizingPanel(f).classes);
  // About 30 pt per class at small C (values fit), capped for large C where the image
  // carries the detail and labels thin out.
  return std::clamp(140.0 + 30.0 * c, f.style.compact ? 220.0 : 320.0, 640.0);
}

// A shared colour bar replaces the panels' own: the panels share one colour range anyway.
HeatmapStyle panelStyle(const Figure& f) {
  HeatmapStyle s = f.style;
  if (f.sharedColorBar) s.showColorBar = false;
  return s;
}

double sharedBarWidth(const Figure& f) {
  if (!f.sharedColorBar || !f.style.showColorBar) return 0;
  return layoutMetrics(sizingPanel(f), f.style).colorBar + 12;
}

// Everything of a panel but its grid, across and down (the title at one line).
QSizeF panelExtras(const Figure& f, const HeatmapStyle& s) {
  const LayoutMetrics m = layoutMetrics(sizingPanel(f), s);
  return {m.axisTitle + m.rowLabels + m.rowSums + m.colorBar + 6 * m.gap + 2 * m.margin,
          m.title + m.colSums + m.colLabels + m.axisTitle + 5 * m.gap + 2 * m.margin};
}

QFont figureTitleFont(const HeatmapStyle& s) {
  QFont font = heatmapFont(s, true);
  font.setPixelSize(s.fontPixels + 4);
  return font;
}

// The figure title wraps at spaces to the figure's width.
double figureTitleHeight(const Figure& f, double width) {
  if (f.title.isEmpty()) return 0;
  const QFontMetricsF fm(figureTitleFont(f.style));
  const QRectF r = fm.boundingRect(QRectF(0, 0, std::max(1.0, width - 8), 1e6),
                                   Qt::AlignHCenter | Qt::TextWordWrap, f.title);
  return std::max(kFigureTitleMin, std::ceil(r.height() + 8));
}

struct FigureGrid {
  int columns = 1, rows = 1;
  double side = 0;
  HeatmapStyle style;  // the panels' style (a page fit may take a smaller font)
};

FigureGrid naturalGrid(const Figure& f) {
  FigureGrid g;
  g.columns = std::max(1, std::min<int>(f.columns, static_cast<int>(f.panels.size())));
  g.rows = static_cast<int>((f.panels.size() + size_t(g.columns) - 1) / size_t(g.columns));
  g.side = naturalSide(f);
  g.style = panelStyle(f);
  return g;
}

// Within a page: the grid (columns x rows) and font that give the largest grid side.
FigureGrid fitGrid(const Figure& f) {
  FigureGrid best = naturalGrid(f);
  if (!f.page.isValid()) return best;
  const int n = static_cast<int>(f.panels.size());
  best.side = -1;
  // Smaller fonts, then no sums (unreadable in panels this small; the synced figure has
  // them), until the grids are readable.
  struct Try {
    int px;
    bool sums;
  };
  for (const Try t : {Try{f.style.fontPixels, true}, Try{9, true}, Try{7, true}, Try{7, false}}) {
    if (t.px > f.style.fontPixels) continue;
    HeatmapStyle s = panelStyle(f);
    s.fontPixels = t.px;
    s.showSums = t.sums && f.style.showSums;
    const QSizeF extras = panelExtras(f, s);
    // A few points of slack for rounding and a panel title that wraps.
    const double width = f.page.width() - sharedBarWidth(f) - 8;
    for (int cols = 1; cols <= n; ++cols) {
      const int rows = (n + cols - 1) / cols;
      const double title = figureTitleHeight(f, f.page.width());
      const double side = std::min({naturalSide(f), width / cols - extras.width(),
                                    (f.page.height() - 8 - title) / rows - extras.height()});
      if (side > best.side + 0.5) best = {cols, rows, side, s};
    }
    if (best.side >= 120) break;  // readable at this font: no need to shrink it
  }
  best.side = std::max(best.side, kMinPanelSide);
  return best;
}

QSizeF panelSize(const Figure& f, const FigureGrid& g) {
  const QSizeF extras = panelExtras(f, g.style);
  const double w = g.side + extras.width();
  // A title that wraps at this width makes the panel taller.
  const LayoutMetrics one = layoutMetrics(sizingPanel(f), g.style);
  double title = one.title;
  for (const HeatmapData& d : f.panels) title = std::max(title, layoutMetrics(d, g.style, w).title);
  return {w, g.side + extras.height() - one.title + title};
}

// A panel with nothing to draw says why, where its matrix would be.
void paintEmptyPanel(QPainter& p, const HeatmapData& d, const HeatmapStyle& style,
                     const QRectF& cell) {
  const LayoutMetrics m = layoutMetrics(d, style);
  p.setPen(Qt::black);
  p.setFont(heatmapFont(style, true));
  const QRectF inner = cell.adjusted(m.margin, m.margin, -m.margin, -m.margin);
  p.drawText(QRectF(inner.left(), inner.top(), inner.width(), m.title),
             Qt::AlignLeft | Qt::AlignVCenter, d.title);
  p.setFont(heatmapFont(style, false));
  p.setPen(QColor(0x55, 0x55, 0x55));
  p.drawText(inner.adjusted(0, m.title, 0, 0), Qt::AlignCenter | Qt::TextWordWrap,
             d.emptyText.isEmpty() ? QStringLiteral("No data") : d.emptyText);
}

}  // namespace

QSizeF figureSizePoints(const Figure& f) {
  if (f.panels.empty()) return {100, 100};
  const FigureGrid g = fitGrid(f);
  const QSizeF p = panelSize(f, g);
  const double width = p.width() * g.columns + sharedBarWidth(f);
  // Whole points, so every format gets exactly the same page.
  return {std::ceil(width), std::ceil(p.height() * g.rows + figureTitleHeight(f, width))};
}

void paintFigure(QPainter& p, const Figure& f, const QRectF& bounds) {
  p.fillRect(bounds, Qt::white);
  if (f.panels.empty()) return;
  QRectF area = bounds;
  if (!f.title.isEmpty()) {
    const double h = figureTitleHeight(f, bounds.width());
    p.setFont(figureTitleFont(f.style));
    p.setPen(Qt::black);
    p.drawText(QRectF(bounds.left() + 4, bounds.top(), bounds.width() - 8, h),
               Qt::AlignCenter | Qt::TextWordWrap, f.title);
    area.setTop(bounds.top() + h);
  }
  const FigureGrid g = fitGrid(f);
  const double bar = sharedBarWidth(f);
  if (bar > 0) {
    // One colour bar for all panels, as tall as one panel's grid, beside the first row.
    const HeatmapData& d = sizingPanel(f);
    const QSizeF panel = panelSize(f, g);
    const double top = area.top() + (panel.height() - g.side) / 2;
    paintColorBar(p, d, f.style,
                  QRectF(area.right() - bar + 4, top, bar - 8,
                         std::min(g.side * 1.5, area.height() - (top - area.top()))));
    area.setRight(area.right() - bar);
  }
  const double w = area.width() / g.columns, h = area.height() / g.rows;
  for (size_t i = 0; i < f.panels.size(); ++i) {
    const QRectF cell(area.left() + w * double(i % size_t(g.columns)),
                      area.top() + h * double(i / size_t(g.columns)), w, h);
    if (f.panels[i].classes > 0)
      paintHeatmap(p, f.panels[i], g.style, cell);
    else
      paintEmptyPanel(p, f.panels[i], g.style, cell);
  }
}

bool writeFigure(const Figure& f, const QString& path, FigureFormat format, int dpi,
                 QString* error) {
  const auto fail = [&](const QString& why) {
    if (error) *error = path + QStringLiteral(": ") + why;
    return false;
  };
  // Every format is written to a temporary file beside PATH and renamed over it only when
  // complete (QSaveFile: the same atomic save as run files), so a full disk or a read-only
  // directory leaves the previous figure intact and no temporary file behind.
  const auto commit = [&](QSaveFile& file) {
    if (file.error() != QFileDevice::NoError) {
      const QString why = file.errorString();
      file.cancelWriting();
      file.commit();  // discards the temporary file
      return fail(why);
    }
    if (!file.commit()) return fail(QStringLiteral("cannot write (%1)").arg(file.errorString()));
    return true;
  };
  dpi = std::clamp(dpi, 30, 1200);
  const QSizeF pts = figureSizePoints(f);
  Figure vf = f;
  // Fonts are sized in logical pixels; one logical pixel is one point in every format.
  if (format == FigureFormat::Png) {
    const double scale = dpi / 72.0;
    QImage image(QSize(int(std::ceil(pts.width() * scale)), int(std::ceil(pts.height() * scale))),
                 QImage::Format_ARGB32_Premultiplied);
    if (image.isNull())
      return fail(QStringLiteral("figure too large for memory at %1 dpi").arg(dpi));
    image.setDotsPerMeterX(int(std::lround(dpi / 0.0254)));
    image.setDotsPerMeterY(int(std::lround(dpi / 0.0254)));
    image.fill(Qt::white);
    {
      QPainter p(&image);
      p.setRenderHint(QPainter::TextAntialiasing);
      p.scale(scale, scale);
      paintFigure(p, vf, QRectF(QPointF(0, 0), pts));
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return fail(file.errorString());
    QImageWriter writer(&file, "png");
    if (!writer.write(image)) return fail(writer.errorString());
    return commit(file);
  }
  // Vector formats: rectangles per cell while that stays small; the image beyond.
  const int classes = f.panels.empty() ? 0 : sizingPanel(f).classes;
  vf.style.vectorCells = classes <= 100;
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return fail(file.errorString());
  if (format == FigureFormat::Svg) {
    QSvgGenerator svg;
    svg.setOutputDevice(&file);
    svg.setSize(pts.toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), pts));
    svg.setResolution(72);
    svg.setTitle(f.title.isEmpty() && !f.panels.empty() ? f.panels.front().title : f.title);
    svg.setDescription(QStringLiteral("ShardLens confusion-matrix figure"));
    QPainter p;
    if (!p.begin(&svg)) return fail(QStringLiteral("cannot write SVG"));
    paintFigure(p, vf, QRectF(QPointF(0, 0), pts));
    p.end();
  } else {
    QPdfWriter pdf(&file);
    pdf.setResolution(std::max(dpi, 300));
    pdf.setPageSize(QPageSize(pts, QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setTitle(f.title.isEmpty() && !f.panels.empty() ? f.panels.front().title : f.title);
    pdf.setCreator(QStringLiteral("ShardLens"));
    QPainter p;
    if (!p.begin(&pdf)) return fail(QStringLiteral("cannot write PDF"));
    const double scale = pdf.resolution() / 72.0;
    p.scale(scale, scale);
    paintFigure(p, vf, QRectF(QPointF(0, 0), pts));
    p.end();
  }
  if (file.size() == 0 && file.error() == QFileDevice::NoError) {
    file.cancelWriting();
    file.commit();
    return fail(QStringLiteral("nothing was written"));
  }
  return commit(file);
}

}  // namespace shardlens::render

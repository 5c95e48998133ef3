#include "ui/render/figures.h"

#include <QFileInfo>
#include <QImage>
#include <QImageWriter>
#include <QPainter>
#include <QPdfWriter>
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

constexpr double kFigureTitle = 24;  // points

// The panel that sets the grid's size: the first one with cells (a failed rank's panel of a
// run has none, only the reason).
const HeatmapData& sizingPanel(const Figure& f) {
  for (const HeatmapData& d : f.panels)
    if (d.classes > 0) return d;
  return f.panels.front();
}

double panelSide(const Figure& f) {
  const int c = std::max(1, sizingPanel(f).classes);
  // About 30 pt per class at small C (values fit), capped for large C where the image
  // carries the detail and labels thin out.
  return std::clamp(140.0 + 30.0 * c, f.style.compact ? 220.0 : 320.0, 640.0);
}

QSizeF panelSize(const Figure& f) {
  const LayoutMetrics m = layoutMetrics(sizingPanel(f), f.style);
  const double side = panelSide(f);
  const double w =
      side + m.axisTitle + m.rowLabels + m.rowSums + m.colorBar + 6 * m.gap + 2 * m.margin;
  const double h =
      side + m.title + m.colSums + m.colLabels + m.axisTitle + 5 * m.gap + 2 * m.margin;
  return {w, h};
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
  const int cols = std::max(1, std::min<int>(f.columns, static_cast<int>(f.panels.size())));
  const int rows = static_cast<int>((f.panels.size() + size_t(cols) - 1) / size_t(cols));
  const QSizeF p = panelSize(f);
  // Whole points, so every format gets exactly the same page.
  return {std::ceil(p.width() * cols),
          std::ceil(p.height() * rows + (f.title.isEmpty() ? 0 : kFigureTitle))};
}

void paintFigure(QPainter& p, const Figure& f, const QRectF& bounds) {
  p.fillRect(bounds, Qt::white);
  if (f.panels.empty()) return;
  QRectF area = bounds;
  if (!f.title.isEmpty()) {
    QFont font = heatmapFont(f.style, true);
    font.setPixelSize(f.style.fontPixels + 4);
    p.setFont(font);
    p.setPen(Qt::black);
    p.drawText(QRectF(bounds.left(), bounds.top(), bounds.width(), kFigureTitle), Qt::AlignCenter,
               f.title);
    area.setTop(bounds.top() + kFigureTitle);
  }
  const int cols = std::max(1, std::min<int>(f.columns, static_cast<int>(f.panels.size())));
  const int rows = static_cast<int>((f.panels.size() + size_t(cols) - 1) / size_t(cols));
  const double w = area.width() / cols, h = area.height() / rows;
  for (size_t i = 0; i < f.panels.size(); ++i) {
    const QRectF cell(area.left() + w * double(i % size_t(cols)),
                      area.top() + h * double(i / size_t(cols)), w, h);
    if (f.panels[i].classes > 0)
      paintHeatmap(p, f.panels[i], f.style, cell);
    else
      paintEmptyPanel(p, f.panels[i], f.style, cell);
  }
}

bool writeFigure(const Figure& f, const QString& path, FigureFormat format, int dpi,
                 QString* error) {
  const auto fail = [&](const QString& why) {
    if (error) *error = path + QStringLiteral(": ") + why;
    return false;
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
    QImageWriter writer(path, "png");
    if (!writer.write(image)) return fail(writer.errorString());
    return true;
  }
  // Vector formats: rectangles per cell while that stays small; the image beyond.
  const int classes = f.panels.empty() ? 0 : sizingPanel(f).classes;
  vf.style.vectorCells = classes <= 100;
  if (format == FigureFormat::Svg) {
    QSvgGenerator svg;
    svg.setFileName(path);
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
    QPdfWriter pdf(path);
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
  const QFileInfo info(path);
  if (!info.exists() || info.size() == 0) return fail(QStringLiteral("nothing was written"));
  return true;
}

}  // namespace shardlens::render

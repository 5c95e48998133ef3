#pragma once
// Paints a heatmap with QPainter on any paint device (widget, QImage, SVG, PDF): cells from
// the cached image, values when they fit, thinned class labels, the row-sum column with
// mismatches marked in colour and by an icon and text, column sums and a colour bar.
#include <QFont>
#include <QImage>
#include <QPainter>
#include <optional>

#include "ui/render/heatmap_data.h"
#include "ui/render/heatmap_geometry.h"

namespace shardlens::render {

// Mismatch marking: a warm fill (colour) plus a warning triangle and "≠" text (shape), so it
// survives greyscale printing and colour-vision deficiency.
inline constexpr QRgb kMismatchFill = 0xfff4b6a8;
inline constexpr QRgb kMismatchInk = 0xffb2182b;

QFont heatmapFont(const HeatmapStyle& s, bool bold = false);
// Sizes of the parts around the grid for this data and style.
LayoutMetrics layoutMetrics(const HeatmapData& d, const HeatmapStyle& s);

struct PaintState {
  const QImage* image = nullptr;  // buildHeatmapImage(d, s); built on demand when null
  // buildPooledImage of the visible cells at the grid's pixel size, used when cells are
  // smaller than a pixel; built on demand when null.
  const QImage* pooled = nullptr;
  std::optional<Cell> hover;
  std::optional<int> selectedRow;
};

void paintHeatmap(QPainter& p, const HeatmapData& d, const HeatmapStyle& s,
                  const HeatmapLayout& layout, const HeatmapViewport& view,
                  const PaintState& state = {});

// Convenience for exports: lays out and paints the whole matrix into `bounds`.
void paintHeatmap(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const QRectF& bounds);

// Parts, exposed for the widgets that paint them separately.
void paintCells(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapViewport& v,
                const QImage& image, const QImage* pooled = nullptr);
// Whether cells are below a device pixel, so the pooled image should be used.
bool needsPooling(const HeatmapViewport& v, double devicePixelsPerUnit = 1.0);
QImage pooledImageFor(const HeatmapData& d, const HeatmapStyle& s, const HeatmapViewport& v,
                      double devicePixelsPerUnit = 1.0);
void paintLabels(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapLayout& l,
                 const HeatmapViewport& v);
void paintSums(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapLayout& l,
               const HeatmapViewport& v);
void paintColorBar(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const QRectF& r);
void paintWarningIcon(QPainter& p, const QRectF& r);

}  // namespace shardlens::render

#pragma once
// Paints a heatmap with QPainter on any paint device (widget, QImage, SVG, PDF): cells from
// the cached image, values when they fit, thinned class labels, the row-sum column with
// mismatches marked in colour and by an icon and text, column sums and a colour bar.
#include <QFont>
#include <QFontMetricsF>
#include <QImage>
#include <QPainter>
#include <QStringList>
#include <optional>
#include <vector>

#include "ui/render/heatmap_data.h"
#include "ui/render/heatmap_geometry.h"

namespace shardlens::render {

// Mismatch marking: a warm fill (colour) plus a warning triangle and "≠" text (shape), so it
// survives greyscale printing and colour-vision deficiency.
inline constexpr QRgb kMismatchFill = 0xfff4b6a8;
inline constexpr QRgb kMismatchInk = 0xffb2182b;
// Rows this tall (pixels) and taller get the dashed outline of a wrong row.
inline constexpr double kRowOutlineMinPixels = 12;

QFont heatmapFont(const HeatmapStyle& s, bool bold = false);
// The widest class label of the heatmap in `font`: its names, or its class numbers.
double widestLabel(const HeatmapData& d, const QFont& font, bool index);
// Sizes of the parts around the grid for this data and style. With the width of the bounds
// (figures), the title band grows to hold a title that wraps; without it (0), it is one line.
LayoutMetrics layoutMetrics(const HeatmapData& d, const HeatmapStyle& s, double width = 0);
// Whether the column labels fit across their columns, unrotated, in a grid `gridWidth` wide:
// when the widest, with a little space, is thinned no more than rotated labels would be.
bool columnLabelsFitAcross(const HeatmapData& d, const HeatmapStyle& s, double gridWidth);
// `m` with its column labels across (one line high).
LayoutMetrics withColumnLabelsAcross(LayoutMetrics m, const HeatmapStyle& s);
// The metrics of the whole matrix painted into `bounds` (figures, exports): layoutMetrics,
// with the column labels across where they fit at the grid size they leave.
LayoutMetrics panelMetrics(const HeatmapData& d, const HeatmapStyle& s, const QRectF& bounds);
// Whether a grid `gridSide` high draws anything in its sum bands: a wrong row's sum, or rows
// tall enough for their sums' line (paintSums' test). A figure whose sums all stay blank
// (an expected matrix of 150 or 1000 classes) leaves the bands out.
bool sumsDrawn(const HeatmapData& d, const HeatmapStyle& s, double gridSide);

// "⚠ 2 rows ≠ expected", or empty when every row is right.
QString mismatchNote(const HeatmapData& d);
// The title and its note fitted to `width` and `maxHeight`: one line when both fit; else the
// title wraps at spaces, the note on its own line when it does not fit after it; then the
// font shrinks (to 7 px); only when nothing fits is the title (never the note) elided.
struct TitleLines {
  QFont font;
  QStringList lines;  // the title's lines; the note follows the last one
  QString note;
  bool noteOwnLine = false;
  double lineHeight = 0;
  double height() const;
};
TitleLines layoutTitle(const HeatmapData& d, const HeatmapStyle& s, double width, double maxHeight);
void paintTitle(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const QRectF& band);

struct PaintState {
  const QImage* image = nullptr;  // buildHeatmapImage(d, s); built when needed and null
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
// `image` and `pooled` are the cached images when the caller has them; null or a null image:
// built here if the zoom needs them.
void paintCells(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapViewport& v,
                const QImage* image, const QImage* pooled = nullptr);
// Whether cells are below a device pixel, so the pooled image should be used.
bool needsPooling(const HeatmapViewport& v, double devicePixelsPerUnit = 1.0);
QImage pooledImageFor(const HeatmapData& d, const HeatmapStyle& s, const HeatmapViewport& v,
                      double devicePixelsPerUnit = 1.0);
// The visible wrong rows that get their own label and sums even where labels are thinned
// (C > ~30): all of them when their lines fit a line apart, else the worst by
// |row sum − true count| whose lines do not overlap a worse one's; in row order.
// `unlabelled` receives how many visible wrong rows are left out (the "+k more" note).
std::vector<int> labelledWrongRows(const HeatmapData& d, const HeatmapViewport& v,
                                   double lineHeight, int* unlabelled = nullptr);
// The note under the grid for the visible wrong rows without a label: "+k more wrong rows,
// not named".
QString moreWrongRowsText(int unlabelled);
// The font of row labels and row sums: the heatmap's, or a smaller one (down to
// kSmallestRowFontPixels) where that gives every row a line of its own, so a small view of
// 10 classes names and marks all its rows instead of every other one; else the heatmap's.
inline constexpr int kSmallestRowFontPixels = 6;
QFont rowFont(const HeatmapStyle& s, double rowHeight, bool bold = false);
// The centre of such a row's line (label and sums): the row's centre, moved just enough to
// keep the whole line inside the grid's height (row 0 of 1000 is thinner than its text).
double wrongRowLineCentre(const HeatmapViewport& v, int row, double lineHeight);
void paintLabels(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapLayout& l,
                 const HeatmapViewport& v);
void paintSums(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const HeatmapLayout& l,
               const HeatmapViewport& v);
// The colour bar's tick marks and the gap between a tick and its number, in pixels.
inline constexpr double kColorBarTick = 3, kColorBarTickGap = 3;
// A colour-bar tick's number: signed explicitly on a difference bar ("+56", "0", "−56").
QString colorBarTickText(const HeatmapData& d, double value);
// The colour bar's label along it: what the values are, which range the colours span
// (rangeNote), "log scale" under one and "white = 0" where zero cells are blank:
// "count, 0–9 per view".
QString colorBarLabel(const HeatmapData& d, const HeatmapStyle& s);
// colorBarLabel shortened to `length` (the bar's height): without the quantity's name, then
// the range note alone, then elided.
QString fittedColorBarLabel(const HeatmapData& d, const HeatmapStyle& s, const QFontMetricsF& fm,
                            double length);
void paintColorBar(QPainter& p, const HeatmapData& d, const HeatmapStyle& s, const QRectF& r);
void paintWarningIcon(QPainter& p, const QRectF& r);

}  // namespace shardlens::render

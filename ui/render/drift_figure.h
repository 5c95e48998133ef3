#pragma once
// The drift figure: each class's row sum minus its true count, evaluation by evaluation, as
// a class x epoch heatmap in diverging colours (0: the row is right), with the classes that
// drift most named. It reads at 10 classes (every row named, values on the cells) and at
// 1000 (rows pooled to pixels by their largest deviation, the worst classes named). The
// GUI's Charts tab and `export` of a run of several epochs draw it.
#include <QImage>
#include <QPainter>
#include <QString>
#include <QStringList>
#include <vector>

#include "core/report/row_drift.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_data.h"

namespace shardlens::render {

struct DriftFigure {
  RowDrift drift;
  std::vector<QString> classNames;  // by class id
  QString title;                    // above the figure; empty: the default title
  int highlight = -1;               // the column shown in the window, outlined
};

// The evaluation axis: each column's label and the axis title, what the columns share said
// once. "epoch 0".."epoch 3": labels "0".."3" under "epoch"; one epoch's validations
// ("epoch 1, validation 0"..): "0".."3" under "validation (epoch 1)"; anything else whole
// under "evaluation". `word` is the columns' kind ("epoch", "validation", "evaluation").
struct DriftColumns {
  std::vector<QString> labels;
  QString axisTitle;
  QString word;
};
DriftColumns driftColumns(const RowDrift& d);

// At most this many classes are named beside the rows when they do not all fit.
inline constexpr int kDriftNamedClasses = 12;

// The rows named beside the grid at `rowHeight` pixels a class, top to bottom: every class
// when their labels fit, else the most drifting ones that do not overlap (`lineHeight`).
std::vector<int> driftNamedRows(const DriftFigure& f, double rowHeight, double lineHeight);

// One pixel per column and per `pixelRows` rows: each pixel the largest |deviation| among
// the classes it covers, so one wrong class among 1000 still shows.
QImage driftImage(const DriftFigure& f, int pixelRows);

// The y axis: a row is a class by its true label, as on the heatmaps.
inline const QString kDriftYTitle = QStringLiteral("true class");

// Where each part of the figure goes inside `bounds`.
struct DriftParts {
  QRectF title;   // as many lines as driftTitleLines() gives at its width
  QRectF yTitle;  // upright, left of the class names
  QRectF names, grid, columns, xTitle, bar;
};
DriftParts driftLayout(const DriftFigure& f, const HeatmapStyle& s, const QRectF& bounds);
// The title broken into lines of at most `width` pixels (a narrow Charts dock), whole words.
QStringList driftTitleLines(const DriftFigure& f, const HeatmapStyle& s, double width);

// Where the cells are inside `bounds` (for hit tests: row = class, column = evaluation).
QRectF driftGrid(const DriftFigure& f, const HeatmapStyle& s, const QRectF& bounds);
QSizeF driftSizePoints(const DriftFigure& f, const HeatmapStyle& s);
void paintDrift(QPainter& p, const DriftFigure& f, const HeatmapStyle& s, const QRectF& bounds);
// drift.EXT in `dir` per format (created if missing), each saved atomically.
bool writeDriftFigure(const DriftFigure& f, const QString& dir,
                      const std::vector<FigureFormat>& formats, int dpi, QStringList* written,
                      QString* error);

}  // namespace shardlens::render

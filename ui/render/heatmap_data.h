#pragma once
// What one heatmap shows, already in display order, plus how values map to colours.
// Built from an Evaluation by heatmap_source.h; painted by heatmap_painter.h.
#include <QImage>
#include <QString>
#include <QStringList>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "ui/render/colormap.h"
#include "ui/render/label_widths.h"

namespace shardlens::render {

struct HeatmapData {
  QString title;
  QString xLabel = QStringLiteral("Predicted");
  QString yLabel = QStringLiteral("True");
  int classes = 0;
  // The cells in display order (may be normalized), in one of two layouts: dense (`values`,
  // C x C row-major) or, when most cells are zero (a rank's share at 1000 classes), sparse
  // rows (`rowStart` has C + 1 offsets into `sparseCols` / `sparseValues`, columns ascending
  // within a row, zeros left out). Images and pooling then cost the non-zero cells, not C².
  std::vector<double> values;
  std::vector<uint32_t> rowStart;
  std::vector<int32_t> sparseCols;
  std::vector<double> sparseValues;
  std::vector<QString> names;  // per display position
  std::vector<int> classOf;    // display position -> class id
  // Widths of `names`, shared by the views of one class axis; null: measured when needed.
  std::shared_ptr<const LabelWidths> nameWidths;
  bool integral = true;  // values are counts: printed without decimals
  // The values count pixels or tokens (many per sample), whose counts span orders of
  // magnitude: ADE20K's wall class has 10^8 pixels, a rare class 10^3. The automatic colour
  // scale is then logarithmic (usesLogScale).
  bool countsManyPerSample = false;
  bool diverging = false;  // signed values (difference): diverging colours around 0
  // Row and column sums in counts (never normalized): observed, and expected where the
  // view has an expectation.
  std::vector<double> rowObserved, rowExpected, colObserved;
  // Per display position, whether the row is wrong (marked): the evaluation's row check
  // (core/diagnosis/row_check.h) for the views of its reported matrix, the comparison's
  // differing rows for a difference of two. The only source of the marks: a heatmap never
  // judges its rows itself, and none is marked when it is empty.
  std::vector<bool> rowWrong;
  // Colour range: each view's own by default (its data's largest magnitude), so a
  // batch-limited synced matrix is not drawn dark under the expected one's range; fixed or
  // shared on request (rangeNote says which).
  double valueMax = 0;
  // What the values are ("count", "fraction of true class"): the colour bar's label.
  QString valueLabel;
  // Which range valueMax is, said after valueLabel on the colour bar of figures ("0–9 per
  // view", "shared range 0–50", "fixed range 0–60"); empty: not said (the window's views).
  QString rangeNote;
  // Shown instead of cells when there is no matrix (classes == 0), e.g. why it is unknown.
  QString emptyText;

  bool sparse() const { return !rowStart.empty(); }
  double value(int row, int col) const;
  // Calls f(col, value) for the stored cells of `row` with first <= col < last, in column
  // order: every cell when dense, the non-zero ones when sparse.
  template <class F>
  void forEachInRow(int row, int first, int last, F&& f) const;
  // Every cell, C x C row-major (tests, small exports).
  std::vector<double> denseValues() const;
  bool hasExpectedRows() const { return !rowExpected.empty(); }
  bool rowMismatch(int row) const;
  int mismatchCount() const;
  double maxAbsValue() const;
  // The axis label of a display position under a style.
  QString label(int pos, bool index) const {
    return index && size_t(pos) < classOf.size() ? QString::number(classOf[size_t(pos)])
                                                 : names[size_t(pos)];
  }
};

template <class F>
void HeatmapData::forEachInRow(int row, int first, int last, F&& f) const {
  if (!sparse()) {
    const double* cells = values.data() + static_cast<size_t>(row) * static_cast<size_t>(classes);
    for (int c = first; c < last; ++c) f(c, cells[c]);
    return;
  }
  const int32_t* begin = sparseCols.data() + rowStart[size_t(row)];
  const int32_t* end = sparseCols.data() + rowStart[size_t(row) + 1];
  for (const int32_t* it = std::lower_bound(begin, end, first); it != end && *it < last; ++it)
    f(int(*it), sparseValues[size_t(it - sparseCols.data())]);
}

// How values map to colours: Auto is logarithmic for counts of pixels or tokens and linear
// otherwise (usesLogScale); Linear and Log are the user's choice for every view.
enum class ColourScale { Auto, Linear, Log };
QString colourScaleName(ColourScale scale);         // "auto", "linear", "log"
ColourScale parseColourScale(const QString& name);  // unknown names give Auto
QStringList colourScaleNames();

struct HeatmapStyle {
  Colormap colormap = Colormap::Viridis;
  ColourScale scale = ColourScale::Auto;
  bool showValues = true;    // values on cells, when cells are large enough to read them
  bool vectorCells = false;  // one rectangle per cell (SVG/PDF at small C) instead of an image
  bool compact = false;      // small multiples: no axis titles (unless axisTitles), short row sums
  bool axisTitles = false;   // compact panels that still say "True" and "Predicted" (figures)
  bool showColorBar = true;
  bool indexLabels = false;  // class numbers instead of names (small views, long names)
  bool showSums = true;      // the row-sum column and column-sum row (off: tiny multiples)
  int fontPixels = 11;
  double maxAspect = 1.0;  // grid height / width where the view is taller (LayoutMetrics)
};

// Which range a heatmap's colours span, said on its colour bar (rangeNote): its own data's,
// one shared with another view (--shared-range), one shared by the ranks, a fixed one (the
// user's: --vmax, View > Fix colour range) or the largest over a run's epochs.
enum class ColourRange { Own, Shared, SharedByRanks, Fixed, OverEpochs };
// The range as numbers, "0–9" or "±7" for a difference.
QString colourRangeText(const HeatmapData& d);
// Sets d.rangeNote for its valueMax: "0–9 per view", "shared range 0–50", "0–3 shared by
// ranks", "fixed range 0–60", "0–12 over the run".
void noteColourRange(HeatmapData& d, ColourRange kind);

// From this many classes a sequential heatmap draws its zero cells blank (white) instead of
// the map's lowest colour: cells are then about a pixel, nearly all of them zero, and in the
// map's colour (viridis' dark purple) the matrix read as a dark square hiding its few
// non-zero cells (a batch-limited synced matrix at 1000 classes). The colour bar says so.
inline constexpr int kBlankZeroClasses = 100;
bool zeroIsBlank(const HeatmapData& d);
inline constexpr QRgb kBlankCell = 0xffffffff;

// Whether a heatmap's colours are on a log scale: the one decision, for the window's views
// and every figure. Auto: for counts of pixels or tokens (a linear scale drew an ADE20K
// matrix as a dark square under its wall class), linear for everything else.
bool usesLogScale(const HeatmapData& d, const HeatmapStyle& s);

// Maps a value to [0, 1] (sequential) or [-1, 1] (diverging), linear or logarithmic.
double scaledValue(const HeatmapData& d, const HeatmapStyle& s, double v);
// The cell's colour: blank for a zero where zeroIsBlank, else the map's at scaledValue.
QRgb cellColor(const HeatmapData& d, const HeatmapStyle& s, double v);

// One pixel per cell; painted scaled up without smoothing. Rebuilt only when the data or
// the colour settings change, never on hover or zoom.
QImage buildHeatmapImage(const HeatmapData& d, const HeatmapStyle& s);

// For cells smaller than a pixel: one pixel per screen pixel over the cells [rows) x [cols)
// it covers, coloured by the largest-magnitude value among them, so a lone non-zero cell
// (a diagonal at C = 1000) stays visible instead of being skipped by plain downscaling.
QImage buildPooledImage(const HeatmapData& d, const HeatmapStyle& s, int firstRow, int rows,
                        int firstCol, int cols, QSize pixels);

// Text of a value as printed on a cell or in a tooltip: a whole number (or one within rounding
// of it, a sum of fractions) without decimals, grouped in thousands from 10,000
// ("33,056,078": a pixel count read at a glance), a true minus ("−46").
QString formatValue(double v, bool integral);
// The same with an explicit sign, "+3", "0", "−3": a difference's cells, sums and bar ends.
QString signedValueText(double v, bool integral);
// A cell's text and a row or column sum's text in a heatmap: signed in a difference view.
QString cellText(const HeatmapData& d, double v);
QString sumText(const HeatmapData& d, double v);

}  // namespace shardlens::render

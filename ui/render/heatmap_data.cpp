#include "ui/render/heatmap_data.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace shardlens::render {

bool HeatmapData::rowMismatch(int row) const {
  if (!hasExpectedRows() || row < 0 || row >= static_cast<int>(rowExpected.size()) ||
      row >= static_cast<int>(rowObserved.size()))
    return false;
  return size_t(row) < rowWrong.size() && rowWrong[size_t(row)];
}

int HeatmapData::mismatchCount() const {
  int n = 0;
  for (int r = 0; r < classes; ++r) n += rowMismatch(r) ? 1 : 0;
  return n;
}

double HeatmapData::value(int row, int col) const {
  if (!sparse())
    return values[static_cast<size_t>(row) * static_cast<size_t>(classes) +
                  static_cast<size_t>(col)];
  const int32_t* begin = sparseCols.data() + rowStart[size_t(row)];
  const int32_t* end = sparseCols.data() + rowStart[size_t(row) + 1];
  const int32_t* it = std::lower_bound(begin, end, col);
  return it != end && *it == col ? sparseValues[size_t(it - sparseCols.data())] : 0.0;
}

std::vector<double> HeatmapData::denseValues() const {
  if (!sparse()) return values;
  const size_t c = static_cast<size_t>(classes);
  std::vector<double> out(c * c, 0.0);
  for (int r = 0; r < classes; ++r)
    forEachInRow(r, 0, classes, [&](int col, double v) { out[size_t(r) * c + size_t(col)] = v; });
  return out;
}

double HeatmapData::maxAbsValue() const {
  double m = 0;
  for (double v : sparse() ? sparseValues : values)
    if (std::isfinite(v)) m = std::max(m, std::abs(v));
  return m;
}

QString colourScaleName(ColourScale scale) {
  switch (scale) {
    case ColourScale::Linear:
      return QStringLiteral("linear");
    case ColourScale::Log:
      return QStringLiteral("log");
    case ColourScale::Auto:
      break;
  }
  return QStringLiteral("auto");
}

ColourScale parseColourScale(const QString& name) {
  const QString n = name.trimmed().toLower();
  if (n == QLatin1String("linear")) return ColourScale::Linear;
  if (n == QLatin1String("log")) return ColourScale::Log;
  return ColourScale::Auto;
}

QStringList colourScaleNames() {
  return {QStringLiteral("auto"), QStringLiteral("linear"), QStringLiteral("log")};
}

bool usesLogScale(const HeatmapData& d, const HeatmapStyle& s) {
  switch (s.scale) {
    case ColourScale::Linear:
      return false;
    case ColourScale::Log:
      return true;
    case ColourScale::Auto:
      break;
  }
  return d.countsManyPerSample;
}

double scaledValue(const HeatmapData& d, const HeatmapStyle& s, double v) {
  if (!std::isfinite(v)) return 0;
  const double top = d.valueMax > 0 ? d.valueMax : 1.0;
  const double mag = std::min(std::abs(v), top);
  double t = mag / top;
  if (usesLogScale(d, s)) {
    // Counts: log(1 + v); fractions: the same curve with 1/1000 of the range as the unit,
    // so a log scale still separates small non-zero cells from zero ones.
    const double unit = d.integral ? 1.0 : top / 1000.0;
    t = std::log1p(mag / unit) / std::log1p(top / unit);
  }
  return d.diverging && v < 0 ? -t : t;
}

QString colourRangeText(const HeatmapData& d) {
  const QString top = formatValue(d.valueMax > 0 ? d.valueMax : 1.0, d.integral);
  return d.diverging ? QStringLiteral("±") + top : QStringLiteral("0–") + top;
}

namespace {

// The note of each kind of range, %1 the range.
const char* rangeNoteFormat(ColourRange kind) {
  switch (kind) {
    case ColourRange::Shared:
      return "shared range %1";
    case ColourRange::SharedByRanks:
      return "%1 shared by ranks";
    case ColourRange::Fixed:
      return "fixed range %1";
    case ColourRange::OverEpochs:
      return "%1 over the run";  // its epochs, or one epoch's validations
    case ColourRange::Own:
      break;
  }
  return "%1 per view";
}

}  // namespace

void noteColourRange(HeatmapData& d, ColourRange kind) {
  // Nothing to span (a difference of equal matrices): said, not a made-up "±1".
  d.rangeNote = d.valueMax > 0 || kind == ColourRange::Fixed
                    ? QString::fromUtf8(rangeNoteFormat(kind)).arg(colourRangeText(d))
                    : QStringLiteral("all 0");
}

bool zeroIsBlank(const HeatmapData& d) {
  return !d.diverging && d.classes >= kBlankZeroClasses;
}

QRgb cellColor(const HeatmapData& d, const HeatmapStyle& s, double v) {
  if (v == 0 && zeroIsBlank(d)) return kBlankCell;
  const double t = scaledValue(d, s, v);
  return d.diverging ? divergingColor(t) : colormapColor(s.colormap, t);
}

namespace {

// Value -> colour with the scale's constants hoisted: the image builders call it once per
// pixel, up to a million times.
struct FastColor {
  const HeatmapData& d;
  const HeatmapStyle& s;
  const std::array<QRgb, 256>& table = colormapTable(s.colormap);
  double top = d.valueMax > 0 ? d.valueMax : 1.0;
  double unit = d.integral ? 1.0 : top / 1000.0;
  double logTop = std::log1p(top / unit);
  bool blankZero = zeroIsBlank(d);
  bool log = usesLogScale(d, s);

  QRgb operator()(double value) const {
    if (d.diverging) return cellColor(d, s, value);
    if (blankZero && value == 0) return kBlankCell;
    const double v = std::isfinite(value) ? std::clamp(value, 0.0, top) : 0.0;
    const double t = log ? std::log1p(v / unit) / logTop : v / top;
    return table[static_cast<size_t>(t * 255.0 + 0.5)];
  }
};

}  // namespace

QImage buildHeatmapImage(const HeatmapData& d, const HeatmapStyle& s) {
  if (d.classes <= 0) return {};
  QImage image(d.classes, d.classes, QImage::Format_RGB32);
  const FastColor color{d, s};
  if (d.sparse()) image.fill(color(0.0));
  for (int r = 0; r < d.classes; ++r) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
    d.forEachInRow(r, 0, d.classes, [&](int c, double v) { line[c] = color(v); });
  }
  return image;
}

QImage buildPooledImage(const HeatmapData& d, const HeatmapStyle& s, int firstRow, int rows,
                        int firstCol, int cols, QSize pixels) {
  if (d.classes <= 0 || rows <= 0 || cols <= 0 || pixels.isEmpty()) return {};
  const int w = std::min(pixels.width(), cols), h = std::min(pixels.height(), rows);
  QImage image(w, h, QImage::Format_RGB32);
  const FastColor color{d, s};
  std::vector<double> best(size_t(w), 0.0);
  // Pixel px covers columns [colEnd[px - 1], colEnd[px]): computed once, not per row.
  std::vector<int> colEnd(static_cast<size_t>(w));
  for (int px = 0; px < w; ++px) colEnd[size_t(px)] = int((int64_t(px + 1) * cols + w - 1) / w);
  // Sparse rows: the pixel of each stored cell's column, looked up per cell.
  std::vector<int> pixelOfCol;
  if (d.sparse()) {
    pixelOfCol.resize(size_t(cols));
    for (int px = 0, c = 0; px < w; ++px)
      for (; c < colEnd[size_t(px)] && c < cols; ++c) pixelOfCol[size_t(c)] = px;
  }
  for (int py = 0; py < h; ++py) {
    const int r0 = firstRow + int(int64_t(py) * rows / h);
    const int r1 = firstRow + int(int64_t(py + 1) * rows / h);
    std::fill(best.begin(), best.end(), 0.0);
    for (int r = r0; r < r1; ++r) {
      if (d.sparse()) {
        d.forEachInRow(r, firstCol, firstCol + cols, [&](int c, double v) {
          double& b = best[size_t(pixelOfCol[size_t(c - firstCol)])];
          if (std::abs(v) > std::abs(b)) b = v;
        });
        continue;
      }
      const double* row = d.values.data() + size_t(r) * size_t(d.classes) + size_t(firstCol);
      // Runs of columns share an output pixel; walk them without a lookup per cell.
      for (int px = 0, c = 0; px < w; ++px) {
        const int end = colEnd[size_t(px)];
        double b = best[size_t(px)];
        for (; c < end && c < cols; ++c)
          if (std::abs(row[c]) > std::abs(b)) b = row[c];
        best[size_t(px)] = b;
      }
    }
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(py));
    for (int px = 0; px < w; ++px) line[px] = color(best[size_t(px)]);
  }
  return image;
}

namespace {

constexpr QChar kMinus(0x2212);

// |v| as a whole number, grouped in thousands from 10,000 (a four-digit count stays compact).
QString wholeNumber(double magnitude) {
  const qlonglong n = std::llround(magnitude);
  QString digits = QString::number(n);
  if (n < 10000) return digits;
  for (qsizetype i = digits.size() - 3; i > 0; i -= 3) digits.insert(i, QLatin1Char(','));
  return digits;
}

// Whether a printed number is not zero: "0.00" of −0.001 gets no sign.
bool showsNonZero(const QString& text) {
  return std::any_of(text.begin(), text.end(),
                     [](QChar c) { return c >= QLatin1Char('1') && c <= QLatin1Char('9'); });
}

}  // namespace

QString formatValue(double v, bool integral) {
  if (!std::isfinite(v)) return v < 0 ? QString(kMinus) + QStringLiteral("∞") : QStringLiteral("∞");
  const double a = std::abs(v);
  QString text;
  // Within rounding of a whole number: a sum of fractions printed "−46", not "−46.0".
  if (integral || std::abs(a - std::round(a)) <= 1e-9 * std::max(1.0, a)) {
    text = wholeNumber(a);
    if (text == QLatin1String("0")) return text;  // never "−0"
  } else if (a >= 100) {
    text = QString::number(a, 'f', 0);
  } else {
    text = QString::number(a, 'f', a >= 10 ? 1 : 2);
  }
  if (v < 0 && showsNonZero(text)) text.prepend(kMinus);
  return text;
}

QString signedValueText(double v, bool integral) {
  const QString text = formatValue(v, integral);
  return v > 0 && showsNonZero(text) ? QLatin1Char('+') + text : text;
}

QString cellText(const HeatmapData& d, double v) {
  return d.diverging ? signedValueText(v, d.integral) : formatValue(v, d.integral);
}

QString sumText(const HeatmapData& d, double v) {
  return d.diverging ? signedValueText(v, false) : formatValue(v, false);
}

}  // namespace shardlens::render

// Colour ranges of figures, as the window's views: each figure its own data's range (a
// batch-limited synced matrix at 1000 classes is not a dark square under the expected one's
// range), the shared and fixed ranges on request, the range said on the colour bar; and the
// wrong rows named where their labels cannot all fit (the worst), or all of them where rows
// are thin but a smaller font fits (a small view of 10 classes).
#include <QBuffer>
#include <QSvgGenerator>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <map>

#include "core/evaluation/scenario.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "tests/ui/heatmap_test_util.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_geometry.h"
#include "ui/render/heatmap_painter.h"
#include "ui/render/heatmap_source.h"

using namespace shardlens;
using namespace shardlens::render;

namespace {

// ImageNet's size with Lightning's limit_val_batches: 8 ranks x 10 batches of 16 evaluate
// 1,280 of 50,000 samples, so the synced counts are a few per class where the expected
// matrix has up to 50.
Evaluation limitedImagenet() {
  Scenario s;
  s.name = "limited-1000";
  s.dataset = "synthetic:classes=1000,per-class=50";
  s.sampler.world_size = 8;
  s.loader.batch_size = 16;
  s.loader.limit = BatchLimit::parse("10");
  return simulate(s);
}

double largestCell(const Matrix& m) {
  double top = 0;
  for (double v : m.cells) top = std::max(top, std::abs(v));
  return top;
}

const Figure& figureNamed(const std::vector<std::pair<QString, Figure>>& set, const QString& n) {
  for (const auto& [name, f] : set)
    if (name == n) return f;
  qFatal("no figure %s", qPrintable(n));
}

// The figure as SVG text: every string painted, as written.
QString svgOf(const Figure& f) {
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator svg;
  svg.setOutputDevice(&buffer);
  const QSizeF pts = figureSizePoints(f);
  svg.setSize(pts.toSize());
  svg.setViewBox(QRectF(QPointF(0, 0), pts));
  QPainter p(&svg);
  paintFigure(p, f, QRectF(QPointF(0, 0), pts));
  p.end();
  return QString::fromUtf8(buffer.data());
}

QImage imageOf(const Figure& f) {
  const QSizeF pts = figureSizePoints(f);
  QImage image(pts.toSize(), QImage::Format_RGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  paintFigure(p, f, QRectF(QPointF(0, 0), pts));
  p.end();
  return image;
}

// 1000 rows of 50 but those in `sums` (row -> its sum), marked wrong by the row check's rule.
HeatmapData rowsOf1000(const std::map<int, double>& sums) {
  HeatmapData d;
  d.classes = 1000;
  d.values.assign(size_t(1000) * 1000, 0.0);
  d.names.resize(1000);
  d.rowExpected.assign(1000, 50.0);
  d.rowObserved.assign(1000, 50.0);
  for (const auto& [row, sum] : sums) d.rowObserved[size_t(row)] = sum;
  test::markWrongRows(d);
  return d;
}

// The whole matrix in 500 x 500 pixels: half a pixel a row.
HeatmapViewport viewOf1000() {
  HeatmapViewport v;
  v.classes = 1000;
  v.grid = QRectF(0, 0, 500, 500);
  return v;
}

double luminance(QRgb c) {
  return 0.2126 * qRed(c) + 0.7152 * qGreen(c) + 0.0722 * qBlue(c);
}

double darkShare(const QImage& image) {
  int64_t dark = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) dark += luminance(image.pixel(x, y)) < 80 ? 1 : 0;
  return double(dark) / (double(image.width()) * image.height());
}

// The share of dark pixels among a heatmap's cells, painted as a figure paints its panel.
double darkCellShare(const HeatmapData& d, const HeatmapStyle& s) {
  const QRectF bounds(0, 0, 1000, 900);
  QImage image(bounds.size().toSize(), QImage::Format_RGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  paintHeatmap(p, d, s, bounds);
  p.end();
  const QRect grid = computeLayout(bounds, panelMetrics(d, s, bounds)).grid.toAlignedRect();
  return darkShare(image.copy(grid.adjusted(2, 2, -2, -2)));  // inside the frame
}

}  // namespace

class TestFigureRanges : public QObject {
  Q_OBJECT
  const Evaluation m_limited = limitedImagenet();

 private slots:
  // The premise: the synced counts are far below the expected ones.
  void limitedSyncedIsSmallerThanExpected() {
    QVERIFY(m_limited.synced && m_limited.expected);
    QVERIFY2(largestCell(*m_limited.synced) * 3 < largestCell(*m_limited.expected),
             qPrintable(QStringLiteral("%1 vs %2")
                            .arg(largestCell(*m_limited.synced))
                            .arg(largestCell(*m_limited.expected))));
  }

  // Each figure spans its own data: the synced matrix's largest count is the top of its
  // colour bar and drawn in the map's brightest colour, not at 9/50 of the way (dark blue).
  void eachFigureItsOwnRange() {
    const auto set = figureSet(m_limited, {}, HeatmapStyle{}, {});
    const HeatmapData& synced = figureNamed(set, QStringLiteral("synced")).panels.front();
    const HeatmapData& expected = figureNamed(set, QStringLiteral("expected")).panels.front();
    const double syncedTop = largestCell(*m_limited.synced);
    QCOMPARE(synced.valueMax, syncedTop);
    QCOMPARE(expected.valueMax, largestCell(*m_limited.expected));
    QCOMPARE(cellColor(synced, HeatmapStyle{}, syncedTop), colormapColor(Colormap::Viridis, 1.0));
    QVERIFY(luminance(cellColor(synced, HeatmapStyle{}, syncedTop)) > 180);
  }

  // The synced figure at 1000 classes is not a dark square: its zero cells are blank, so
  // most of the figure is light and the non-zero cells show.
  void limitedSyncedFigureIsNotDark() {
    const auto set = figureSet(m_limited, {}, HeatmapStyle{}, {});
    const Figure& synced = figureNamed(set, QStringLiteral("synced"));
    const QImage image = imageOf(synced);
    QVERIFY(!image.isNull());
    const double dark = darkShare(image);
    QVERIFY2(dark < 0.2, qPrintable(QString::number(dark)));
    // Still a matrix: its non-zero cells are coloured (a dark pixel per diagonal cell at
    // least, pooled), not a blank square.
    QVERIFY2(dark > 0.0005, qPrintable(QString::number(dark)));
    // The premise of the blank zeros: in the map's own colour for zero, most of it is dark.
    QVERIFY(luminance(colormapColor(Colormap::Viridis, 0.0)) < 80);
  }

  // ADE20K's pixel counts span eight orders of magnitude (its wall class alone is a quarter
  // of the pixels): on a linear scale nearly every non-zero cell of the lesson's 150-class
  // matrix was the map's dark end. The automatic scale is logarithmic for pixel counts, in
  // the figures as in the window's views (one decision, usesLogScale), and says so.
  void pixelMatrixIsNotDarkByDefault() {
    const Evaluation e = simulate_preset("ade20k-batch-limit");
    QCOMPARE(int(e.meta.task), int(Task::Segmentation));
    const auto set = figureSet(e, {}, HeatmapStyle{}, {});
    const Figure& synced = figureNamed(set, QStringLiteral("synced"));
    const HeatmapData& d = synced.panels.front();
    QVERIFY(usesLogScale(d, synced.style));
    const double dark = darkCellShare(d, synced.style);
    QVERIFY2(dark < 0.1, qPrintable(QString::number(dark)));
    QVERIFY2(dark > 0.001, qPrintable(QString::number(dark)));  // still a matrix, not blank
    const QString top = formatValue(largestCell(*e.synced), true);
    QVERIFY2(svgOf(synced).contains(
                 QStringLiteral("pixels, 0–%1 per view, log scale, white = 0").arg(top)),
             qPrintable(top));
    // The premise, and linear still chosen when asked: then it is a dark square.
    HeatmapStyle linear = synced.style;
    linear.scale = ColourScale::Linear;
    QVERIFY(!usesLogScale(d, linear));
    const double linearDark = darkCellShare(d, linear);
    QVERIFY2(linearDark > 0.2 && linearDark > 3 * dark,
             qPrintable(QStringLiteral("%1 vs %2").arg(linearDark).arg(dark)));
  }

  // A figure's sums where they are drawn: not for 150 rows too thin for their line and none
  // wrong (ADE20K's expected matrix: a blank band was kept beside it), yes for its wrong rows
  // and for 10 classes.
  void sumsOnlyWhereDrawn() {
    const Evaluation ade = simulate_preset("ade20k-batch-limit");
    const HeatmapStyle s;
    QVERIFY(!sumsDrawn(expectedHeatmap(ade, {}), s, 640));
    QVERIFY(sumsDrawn(syncedHeatmap(ade, {}), s, 640));  // its wrong rows' sums
    QVERIFY(sumsDrawn(expectedHeatmap(ade, {}), s, 150 * 20));
    const Evaluation ten = simulate_preset("padding-duplicates");
    QVERIFY(sumsDrawn(expectedHeatmap(ten, {}), s, 320));
  }

  // The automatic scale: log for counts of pixels, linear for a classification's counts and
  // for fractions (a normalized view); a chosen scale holds for every view.
  void automaticScaleFollowsWhatIsCounted() {
    const Evaluation ade = simulate_preset("ade20k-batch-limit");
    const HeatmapStyle automatic;
    QVERIFY(usesLogScale(syncedHeatmap(ade, {}), automatic));
    QVERIFY(usesLogScale(differenceHeatmap(ade, {}), automatic));
    MatrixOptions rows;
    rows.normalization = Normalization::True;
    QVERIFY(!usesLogScale(syncedHeatmap(ade, rows), automatic));
    QVERIFY(!usesLogScale(syncedHeatmap(m_limited, {}), automatic));
    HeatmapStyle log;
    log.scale = ColourScale::Log;
    QVERIFY(usesLogScale(syncedHeatmap(m_limited, {}), log));
    QCOMPARE(parseColourScale(QStringLiteral("LOG")), ColourScale::Log);
    QCOMPARE(parseColourScale(QStringLiteral("bogus")), ColourScale::Auto);
    QCOMPARE(colourScaleName(ColourScale::Linear), QStringLiteral("linear"));
  }

  // --shared-range: synced and expected on the larger range of the two, as figures were.
  void sharedRangeKeepsTheOldBehaviour() {
    FigureSetOptions o;
    o.sharedRange = true;
    const auto set = figureSet(m_limited, {}, HeatmapStyle{}, o);
    const double both = std::max(largestCell(*m_limited.synced), largestCell(*m_limited.expected));
    QCOMPARE(figureNamed(set, QStringLiteral("synced")).panels.front().valueMax, both);
    QCOMPARE(figureNamed(set, QStringLiteral("expected")).panels.front().valueMax, both);
  }

  // Every colour bar says which range its colours span, with the numbers.
  void rangeSaidOnTheColourBar() {
    const QString top = QString::number(qlonglong(largestCell(*m_limited.synced)));
    const QString expectedTop = QString::number(qlonglong(largestCell(*m_limited.expected)));
    const QString own =
        svgOf(figureNamed(figureSet(m_limited, {}, HeatmapStyle{}, {}), QStringLiteral("synced")));
    QVERIFY2(own.contains(QStringLiteral("count, 0–%1 per view, white = 0").arg(top)),
             qPrintable(top));
    // Most of its 1000 rows are wrong: the ones not named are counted under the grid.
    QVERIFY(own.contains(QStringLiteral(" more wrong rows, not named")));
    HeatmapStyle log;
    log.scale = ColourScale::Log;
    const QString logSvg =
        svgOf(figureNamed(figureSet(m_limited, {}, log, {}), QStringLiteral("synced")));
    QVERIFY(logSvg.contains(QStringLiteral("count, 0–%1 per view, log scale, white = 0").arg(top)));
    FigureSetOptions shared;
    shared.sharedRange = true;
    const QString sharedSvg = svgOf(
        figureNamed(figureSet(m_limited, {}, HeatmapStyle{}, shared), QStringLiteral("synced")));
    QVERIFY(sharedSvg.contains(QStringLiteral("count, shared range 0–%1").arg(expectedTop)));
    FigureSetOptions fixed;
    fixed.vmax = 60;
    const QString fixedSvg = svgOf(
        figureNamed(figureSet(m_limited, {}, HeatmapStyle{}, fixed), QStringLiteral("expected")));
    QVERIFY(fixedSvg.contains(QStringLiteral("count, fixed range 0–60")));
  }

  // Many wrong rows at 1000 classes: the named ones are wrong rows, the worst among them,
  // their lines apart; the rest are counted.
  void wrongRowLabelsAreTheWorstWrongRows() {
    std::map<int, double> sums;
    for (int r = 0; r < 1000; r += 3) sums[r] = 49;  // 334 rows off by 1
    const std::vector<int> worst = {101, 502, 899};
    sums[101] = 10;
    sums[502] = 20;
    sums[899] = 90;
    const HeatmapData d = rowsOf1000(sums);
    int wrong = 0;
    for (int r = 0; r < 1000; ++r) wrong += d.rowObserved[size_t(r)] != 50 ? 1 : 0;
    QCOMPARE(wrong, 334 + 3);
    const HeatmapViewport v = viewOf1000();
    const double line = 13;
    int unlabelled = -1;
    const std::vector<int> rows = labelledWrongRows(d, v, line, &unlabelled);
    for (int r : worst)
      QVERIFY2(std::count(rows.begin(), rows.end(), r) == 1, qPrintable(QString::number(r)));
    for (int r : rows) QVERIFY(d.rowObserved[size_t(r)] != 50);
    QVERIFY(std::is_sorted(rows.begin(), rows.end()));
    for (size_t k = 1; k < rows.size(); ++k)
      QVERIFY(wrongRowLineCentre(v, rows[k], line) - wrongRowLineCentre(v, rows[k - 1], line) >=
              line - 1e-6);
    QVERIFY2(rows.size() >= 25, qPrintable(QString::number(rows.size())));  // 500 / 13 lines
    QCOMPARE(unlabelled, wrong - int(rows.size()));
    QCOMPARE(moreWrongRowsText(unlabelled),
             QStringLiteral("+%1 more wrong rows, not named").arg(unlabelled));
  }

  // Few wrong rows: every one named, none counted as left out.
  void fewWrongRowsAllNamed() {
    const HeatmapData d = rowsOf1000({{0, 51}, {7, 51}, {400, 51}, {999, 51}});
    int unlabelled = -1;
    const std::vector<int> rows = labelledWrongRows(d, viewOf1000(), 13, &unlabelled);
    // Rows 0 and 7 are 3.5 px apart: their lines cannot both be drawn, the other two are.
    QCOMPARE(int(rows.size()), 3);
    QCOMPARE(rows[1], 400);
    QCOMPARE(rows[2], 999);
    QCOMPARE(unlabelled, 1);
  }

  // The small difference view of 10 classes, every row wrong, rows thinner than a line of
  // the heatmap's font: every row's label is drawn (in a smaller font), not every other one.
  void smallDifferenceViewNamesEveryRow() {
    HeatmapData d;
    d.classes = 10;
    d.diverging = true;
    d.values.assign(100, 0.0);
    for (int r = 0; r < 10; ++r) {
      d.names.push_back(QStringLiteral("k%1").arg(r));
      d.values[size_t(r * 10 + r)] = r % 2 ? 1 : -1;
      d.rowObserved.push_back(r % 2 ? 1 : -1);
    }
    d.rowExpected.assign(10, 0.0);
    d.colObserved.assign(10, 0.0);
    d.valueMax = 1;
    test::markWrongRows(d);
    HeatmapStyle s;
    s.compact = true;
    const QRectF bounds(0, 0, 200, 150);
    const HeatmapLayout layout = computeLayout(bounds, panelMetrics(d, s, bounds));
    const double row = layout.grid.height() / 10;
    const double line = QFontMetricsF(heatmapFont(s)).height();
    QVERIFY2(row < line * 0.95, qPrintable(QStringLiteral("%1 %2").arg(row).arg(line)));
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(bounds.size().toSize());
    QPainter p(&svg);
    paintHeatmap(p, d, s, bounds);
    p.end();
    const QString text = QString::fromUtf8(buffer.data());
    for (int r = 0; r < 10; ++r)
      QVERIFY2(text.contains(QStringLiteral(">k%1<").arg(r)), qPrintable(QString::number(r)));
  }
};

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  TestFigureRanges t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_figure_ranges.moc"

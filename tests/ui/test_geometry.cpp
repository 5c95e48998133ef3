// Painting maths without painting: layout, hit-testing, zoom and pan, label thinning, colour
// scales and the cached image.
#include <QtTest>

#include "tests/ui/heatmap_test_util.h"
#include "ui/render/colormap.h"
#include "ui/render/heatmap_data.h"
#include "ui/render/heatmap_geometry.h"

using namespace shardlens::render;

class TestGeometry : public QObject {
  Q_OBJECT

  static HeatmapViewport viewport(int classes) {
    HeatmapViewport v;
    v.classes = classes;
    v.grid = QRectF(100, 50, 400, 400);
    return v;
  }

 private slots:
  void layoutGridIsSquareAndInside() {
    const QRectF bounds(0, 0, 800, 500);
    const HeatmapLayout l = computeLayout(bounds, LayoutMetrics{});
    QCOMPARE(l.grid.width(), l.grid.height());
    QVERIFY(bounds.contains(l.grid));
    QVERIFY(bounds.contains(l.colorBar));
    QVERIFY(l.rowLabels.right() <= l.grid.left());
    QVERIFY(l.rowSums.left() >= l.grid.right());
    QVERIFY(l.colorBar.left() >= l.rowSums.right());
    QVERIFY(l.colLabels.top() >= l.grid.bottom());
    QVERIFY(l.xTitle.bottom() <= bounds.bottom());
  }

  void layoutOmitsZeroSizedParts() {
    LayoutMetrics m;
    m.colorBar = 0;
    m.rowSums = 0;
    const HeatmapLayout l = computeLayout(QRectF(0, 0, 2000, 300), m);
    // Height-limited: the grid fills what is left of the height.
    QCOMPARE(l.grid.bottom() + m.gap + m.colSums + m.gap + m.colLabels + m.gap + m.axisTitle,
             300.0 - m.margin);
  }

  void cellHitTesting() {
    const HeatmapViewport v = viewport(10);  // 40 px cells
    QCOMPARE(v.cellWidth(), 40.0);
    QCOMPARE(v.cellAt({101, 51}), std::optional<Cell>(Cell{0, 0}));
    QCOMPARE(v.cellAt({100 + 40 * 3 + 20, 50 + 40 * 7 + 1}), std::optional<Cell>(Cell{7, 3}));
    QCOMPARE(v.cellAt({499.9, 449.9}), std::optional<Cell>(Cell{9, 9}));
    QVERIFY(!v.cellAt({500, 100}));  // right edge is outside
    QVERIFY(!v.cellAt({99, 100}));
    QVERIFY(!v.cellAt({200, 451}));
    for (int r = 0; r < 10; ++r)
      for (int c = 0; c < 10; ++c)
        QCOMPARE(v.cellAt(v.cellRect({r, c}).center()), std::optional<Cell>(Cell{r, c}));
  }

  void axisMappingRoundTrips_data() {
    QTest::addColumn<QPointF>("matrixPoint");
    QTest::newRow("the origin") << QPointF(123.25, 456.5);
    QTest::newRow("fractions inside the view") << QPointF(150.1, 470.9);
    QTest::newRow("whole cells further on") << QPointF(200, 500);
  }

  void axisMappingRoundTrips() {
    QFETCH(QPointF, matrixPoint);
    HeatmapViewport v = viewport(1000);
    v.zoom = 7.3;
    v.origin = {123.25, 456.5};
    const QPointF back = v.toMatrix(v.toScreen(matrixPoint.x(), matrixPoint.y()));
    QVERIFY(qAbs(back.x() - matrixPoint.x()) < 1e-9 && qAbs(back.y() - matrixPoint.y()) < 1e-9);
  }

  void zoomKeepsAnchorCell() {
    HeatmapViewport v = viewport(100);
    const QPointF anchor(317, 221);
    const auto before = v.cellAt(anchor);
    const QPointF m = v.toMatrix(anchor);
    v.zoomAt(anchor, 4.0);
    QCOMPARE(v.zoom, 4.0);
    QCOMPARE(v.cellAt(anchor), before);
    QVERIFY((v.toMatrix(anchor) - m).manhattanLength() < 1e-9);
    const VisibleRange vis = v.visible();
    const int shown = vis.lastCol - vis.firstCol + 1;
    QVERIFY(shown == 25 || shown == 26);  // 100 / 4 cells, one more when cut at the edges
  }

  void zoomIsClamped() {
    HeatmapViewport v = viewport(10);
    v.zoomAt({300, 250}, 0.1);
    QCOMPARE(v.zoom, 1.0);
    QCOMPARE(v.origin, QPointF(0, 0));
    v.zoomAt({300, 250}, 1000);
    QCOMPARE(v.zoom, v.maxZoom());
  }

  void panStaysInsideMatrix() {
    HeatmapViewport v = viewport(100);
    v.zoomAt(v.grid.center(), 2.0);
    v.panBy({10000, 10000});
    QCOMPARE(v.origin, QPointF(0, 0));
    v.panBy({-10000, -10000});
    QCOMPARE(v.origin, QPointF(50, 50));
    const VisibleRange vis = v.visible();
    QCOMPARE(vis.firstRow, 50);
    QCOMPARE(vis.lastRow, 99);
  }

  void keyboardStepsStayInside() {
    QCOMPARE(stepCell({0, 0}, -1, -1, 10), (Cell{0, 0}));
    QCOMPARE(stepCell({3, 4}, 1, -2, 10), (Cell{4, 2}));
    QCOMPARE(stepCell({8, 8}, 25, 25, 10), (Cell{9, 9}));
  }

  void ensureVisiblePansTheLeast() {
    HeatmapViewport v = viewport(100);
    v.zoomAt(v.grid.topLeft(), 4.0);  // 25 cells across, from cell 0
    QCOMPARE(v.origin, QPointF(0, 0));
    QCOMPARE(v.cellsAcross(), 25);
    v.ensureVisible({10, 20});  // already visible: no pan
    QCOMPARE(v.origin, QPointF(0, 0));
    v.ensureVisible({30, 25});  // just past the bottom-right: the cell lands on the edge
    QCOMPARE(v.origin, QPointF(1, 6));
    VisibleRange vis = v.visible();
    QCOMPARE(vis.lastRow, 30);
    QCOMPARE(vis.lastCol, 25);
    v.ensureVisible({0, 99});  // back to the top, far right
    QCOMPARE(v.origin, QPointF(75, 0));
    vis = v.visible();
    QCOMPARE(vis.firstRow, 0);
    QCOMPARE(vis.lastCol, 99);
  }

  void visibleRangeAtZoomOne() {
    const VisibleRange vis = viewport(1000).visible();
    QCOMPARE(vis.firstRow, 0);
    QCOMPARE(vis.lastRow, 999);
    QCOMPARE(vis.firstCol, 0);
    QCOMPARE(vis.lastCol, 999);
  }

  void labelThinning_data() {
    QTest::addColumn<double>("cell");
    QTest::addColumn<double>("labelHeight");
    QTest::addColumn<int>("step");
    QTest::newRow("room for every label") << 40.0 << 12.0 << 1;
    QTest::newRow("every 2nd") << 10.0 << 12.0 << 2;
    QTest::newRow("every 5th") << 4.0 << 12.0 << 5;
    QTest::newRow("every 50th") << 0.4 << 12.0 << 50;
    QTest::newRow("every 50th, taller labels") << 0.4 << 13.0 << 50;
    QTest::newRow("every 200th") << 0.1 << 13.0 << 200;
  }

  void labelThinning() {
    QFETCH(double, cell);
    QFETCH(double, labelHeight);
    QFETCH(int, step);
    QCOMPARE(labelStep(cell, labelHeight), step);
  }

  void thinnedLabelsNeverOverlap_data() {
    QTest::addColumn<double>("cell");
    for (double cell : {0.05, 0.3, 1.0, 2.5, 7.0, 13.0}) QTest::addRow("cell %g px", cell) << cell;
  }

  void thinnedLabelsNeverOverlap() {
    QFETCH(double, cell);
    QVERIFY(labelStep(cell, 13) * cell >= 13);
  }

  void colormapsAreMonotoneInLightness_data() {
    QTest::addColumn<Colormap>("colormap");
    for (Colormap m : {Colormap::Viridis, Colormap::Cividis, Colormap::Magma})
      QTest::newRow(qPrintable(colormapName(m))) << m;
  }

  void colormapsAreMonotoneInLightness() {
    QFETCH(Colormap, colormap);
    const QColor lo(colormapColor(colormap, 0)), hi(colormapColor(colormap, 1));
    QVERIFY(lo.lightness() < hi.lightness());
  }

  void colormapEndsAndNames() {
    QCOMPARE(QColor(colormapColor(Colormap::Grey, 0)), QColor(Qt::white));
    QCOMPARE(colormapColor(Colormap::Viridis, 0), qRgb(0x44, 0x01, 0x54));
    QCOMPARE(colormapColor(Colormap::Viridis, 1), qRgb(0xfd, 0xe7, 0x25));
    QCOMPARE(QColor(divergingColor(0)).lightness(), QColor(0xf7f7f7).lightness());
    for (const QString& name : colormapNames()) QCOMPARE(colormapName(parseColormap(name)), name);
    QCOMPARE(parseColormap("gray"), Colormap::Grey);
  }

  void scalesLinearAndLog() {
    HeatmapData d;
    d.classes = 1;
    d.values = {0};
    d.valueMax = 1000;
    HeatmapStyle s;
    QCOMPARE(scaledValue(d, s, 500), 0.5);
    QCOMPARE(scaledValue(d, s, 2000), 1.0);
    s.scale = ColourScale::Log;
    QCOMPARE(scaledValue(d, s, 0), 0.0);
    QCOMPARE(scaledValue(d, s, 1000), 1.0);
    QVERIFY(scaledValue(d, s, 10) > 0.3);  // log lifts small counts
    d.diverging = true;
    s.scale = ColourScale::Linear;
    QCOMPARE(scaledValue(d, s, -500), -0.5);
  }

  void imageHasOnePixelPerCell() {
    HeatmapData d;
    d.classes = 3;
    d.values = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    d.valueMax = 8;
    HeatmapStyle s;
    const QImage img = buildHeatmapImage(d, s);
    QCOMPARE(img.size(), QSize(3, 3));
    QCOMPARE(img.pixel(0, 0), colormapColor(s.colormap, 0));
    QCOMPARE(img.pixel(2, 2), colormapColor(s.colormap, 1));
    QCOMPARE(img.pixel(1, 1), colormapColor(s.colormap, 0.5));
  }

  void pooledImageKeepsLoneCells() {
    // 1000 x 1000 with only the diagonal set, shown in 100 x 100 pixels: plain downscaling
    // would skip nine cells in ten; max pooling keeps every diagonal pixel bright.
    HeatmapData d;
    d.classes = 1000;
    d.values.assign(1000 * 1000, 0);
    for (int i = 0; i < 1000; ++i) d.values[size_t(i) * 1001] = 5;
    d.valueMax = 5;
    HeatmapStyle s;
    const QImage img = buildPooledImage(d, s, 0, 1000, 0, 1000, QSize(100, 100));
    QCOMPARE(img.size(), QSize(100, 100));
    for (int i = 0; i < 100; ++i) QCOMPARE(img.pixel(i, i), colormapColor(s.colormap, 1));
    // At 1000 classes zero cells are blank (white), not the map's dark end.
    const QRgb white = qRgb(255, 255, 255);
    QCOMPARE(img.pixel(10, 50), white);
    // A sub-range (zoomed in) maps onto its own pixels.
    const QImage part = buildPooledImage(d, s, 500, 200, 500, 200, QSize(50, 50));
    QCOMPARE(part.pixel(0, 0), colormapColor(s.colormap, 1));
    QCOMPARE(part.pixel(49, 0), white);
    // A count of 1 among zeros is still the map's colour, not blank.
    d.values[size_t(10) * 1000 + 500] = 1;
    QCOMPARE(buildHeatmapImage(d, s).pixel(500, 10), colormapColor(s.colormap, 1.0 / 5));
    // Below 100 classes a zero is the map's lowest colour, as the colour bar's foot.
    HeatmapData small;
    small.classes = 99;
    small.values.assign(99 * 99, 0);
    small.values[0] = 5;
    small.valueMax = 5;
    QCOMPARE(buildHeatmapImage(small, s).pixel(1, 0), colormapColor(s.colormap, 0));
  }

  void rowMismatch() {
    HeatmapData d;
    d.classes = 3;
    d.rowObserved = {50, 52, 49};
    QCOMPARE(d.mismatchCount(), 0);  // no expectation, nothing to mismatch
    d.rowExpected = {50, 50, 50};
    test::markWrongRows(d);
    QVERIFY(!d.rowMismatch(0));
    QVERIFY(d.rowMismatch(1));
    QVERIFY(d.rowMismatch(2));
    QCOMPARE(d.mismatchCount(), 2);
  }

  void formatting() {
    QCOMPARE(formatValue(12, true), QStringLiteral("12"));
    QCOMPARE(formatValue(0.25, false), QStringLiteral("0.25"));
    // A true minus, never on a zero ("−0.00" of a rounding error).
    QCOMPARE(formatValue(-3, false), QStringLiteral("\u22123"));
    QCOMPARE(formatValue(-0.001, false), QStringLiteral("0.00"));
    QCOMPARE(formatValue(-0.0, true), QStringLiteral("0"));
    // A sum of fractions within rounding of a whole number prints as one: "−46", not "−46.0".
    QCOMPARE(formatValue(-46.000000000001, false), QStringLiteral("\u221246"));
    QCOMPARE(formatValue(45.95, false), QStringLiteral("46.0"));
    // Thousands grouped from 10,000: a pixel count reads at a glance, a 4-digit count stays.
    QCOMPARE(formatValue(9880, true), QStringLiteral("9880"));
    QCOMPARE(formatValue(19840, true), QStringLiteral("19,840"));
    QCOMPARE(formatValue(-119082108, true), QStringLiteral("\u2212119,082,108"));
    QCOMPARE(formatValue(100000, true), QStringLiteral("100,000"));
  }

  // A difference's texts are signed both ways; other views' only when negative.
  void signedTexts() {
    QCOMPARE(signedValueText(7, true), QStringLiteral("+7"));
    QCOMPARE(signedValueText(-7, true), QStringLiteral("\u22127"));
    QCOMPARE(signedValueText(0, true), QStringLiteral("0"));
    QCOMPARE(signedValueText(0.001, false), QStringLiteral("0.00"));
    HeatmapData d;
    QCOMPARE(cellText(d, 7), QStringLiteral("7"));
    QCOMPARE(sumText(d, 12345), QStringLiteral("12,345"));
    d.diverging = true;
    QCOMPARE(cellText(d, 7), QStringLiteral("+7"));
    QCOMPARE(sumText(d, -12345), QStringLiteral("\u221212,345"));
  }
};

QTEST_GUILESS_MAIN(TestGeometry)
#include "test_geometry.moc"

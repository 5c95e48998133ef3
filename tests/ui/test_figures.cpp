// Exported figures are valid: PNG decodes at the size the DPI implies, SVG parses and names
// the classes, PDF is a complete PDF; the CLI's figure set writes every file.
#include <QImageReader>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <set>

#include "core/sim/engine.h"
#include "tests/ui/heatmap_test_util.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_painter.h"
#include "ui/render/heatmap_source.h"

using namespace shardlens;
using namespace shardlens::render;

namespace {

// 3 named classes, 10 samples on 4 ranks: padding duplicates make two rows wrong.
Evaluation smallEvaluation() {
  auto labels = std::make_shared<Labels>(synthetic_counts({4, 3, 3}));
  labels->class_names = {"cat", "dog", "bird"};
  std::vector<int32_t> predictions(labels->targets.begin(), labels->targets.end());
  predictions[0] = (predictions[0] + 1) % 3;
  Scenario s;
  s.name = "figure-test";
  s.title = "Figure test";
  s.sampler.world_size = 4;
  s.loader.batch_size = 2;
  return evaluate(s, make_inputs(labels, predictions));
}

}  // namespace

class TestFigures : public QObject {
  Q_OBJECT
  Evaluation m_eval = smallEvaluation();
  QTemporaryDir m_dir{qEnvironmentVariable("SHARDLENS_KEEP_FIGURES").isEmpty()
                          ? QDir::tempPath() + QStringLiteral("/shardlens-figures-XXXXXX")
                          : qEnvironmentVariable("SHARDLENS_KEEP_FIGURES") +
                                QStringLiteral("/figures-XXXXXX")};

  Figure syncedFigure() const {
    Figure f;
    f.panels.push_back(syncedHeatmap(m_eval, {}));
    return f;
  }

 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    // SHARDLENS_KEEP_FIGURES=DIR keeps the figures to look at them.
    m_dir.setAutoRemove(qEnvironmentVariable("SHARDLENS_KEEP_FIGURES").isEmpty());
  }

  void heatmapsOfAnEvaluation() {
    const HeatmapData d = syncedHeatmap(m_eval, {});
    QCOMPARE(d.classes, 3);
    QCOMPARE(d.names[0], QStringLiteral("cat"));
    QVERIFY(d.mismatchCount() > 0);  // 10 samples on 4 ranks: padded to 12
    QCOMPARE(expectedHeatmap(m_eval, {}).mismatchCount(), 0);
    const HeatmapData diff = differenceHeatmap(m_eval, {});
    QVERIFY(diff.diverging);
    double total = 0;
    for (double v : diff.denseValues()) total += v;
    QCOMPARE(total, 2.0);  // two padding duplicates
    QCOMPARE(int(rankHeatmaps(m_eval, {}).size()), 4);
  }

  void classOrderPermutes() {
    MatrixOptions o;
    o.order = ClassOrder::Name;
    const HeatmapData d = syncedHeatmap(m_eval, o);
    QCOMPARE(d.names[0], QStringLiteral("bird"));
    QCOMPARE(d.classOf[0], 2);
    QCOMPARE(d.rowObserved[0], m_eval.synced->row_sums()[2]);
  }

  void pngAtChosenDpi_data() {
    QTest::addColumn<int>("dpi");
    QTest::newRow("screen 72 dpi") << 72;
    QTest::newRow("print 150 dpi") << 150;
  }

  void pngAtChosenDpi() {
    QFETCH(int, dpi);
    const Figure f = syncedFigure();
    const QSizeF pts = figureSizePoints(f);
    const QString path = m_dir.filePath(QStringLiteral("synced-%1.png").arg(dpi));
    QString error;
    QVERIFY2(writeFigure(f, path, FigureFormat::Png, dpi, &error), qPrintable(error));
    QImageReader reader(path);
    QCOMPARE(reader.format(), QByteArray("png"));
    const QImage img = reader.read();
    QVERIFY(!img.isNull());
    QCOMPARE(img.width(), int(std::ceil(pts.width() * dpi / 72.0)));
    QCOMPARE(img.height(), int(std::ceil(pts.height() * dpi / 72.0)));
    QVERIFY(std::abs(img.dotsPerMeterX() - dpi / 0.0254) < 2);
    // The mismatch fill is there, so the marker made it into the figure.
    bool marked = false;
    for (int y = 0; y < img.height() && !marked; y += 2)
      for (int x = 0; x < img.width() && !marked; x += 2)
        marked = (img.pixel(x, y) & 0xffffff) == (kMismatchFill & 0xffffff);
    QVERIFY(marked);
  }

  void svgNamesClasses() {
    const QString path = m_dir.filePath(QStringLiteral("synced.svg"));
    QString error;
    QVERIFY2(writeFigure(syncedFigure(), path, FigureFormat::Svg, 150, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray svg = file.readAll();
    QVERIFY(svg.contains("<svg"));
    for (const char* name : {"cat", "dog", "bird", "Predicted", "True", "Synced"})
      QVERIFY2(svg.contains(name), name);
    QSvgRenderer renderer(path);
    QVERIFY(renderer.isValid());
    // Points map one to one onto the view box (the mm width depends on the reader's DPI).
    QCOMPARE(renderer.viewBoxF(), QRectF(QPointF(0, 0), figureSizePoints(syncedFigure())));
  }

  void pdfIsComplete() {
    const QString path = m_dir.filePath(QStringLiteral("synced.pdf"));
    QString error;
    QVERIFY2(writeFigure(syncedFigure(), path, FigureFormat::Pdf, 300, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray pdf = file.readAll();
    QVERIFY(pdf.startsWith("%PDF-"));
    QVERIFY(pdf.trimmed().endsWith("%%EOF"));
    QVERIFY(pdf.contains("/MediaBox"));
    QVERIFY(pdf.size() > 2000);
  }

  void unwritablePathFails() {
    QString error;
    QVERIFY(!writeFigure(syncedFigure(), QStringLiteral("/nonexistent-dir/x.png"),
                         FigureFormat::Png, 72, &error));
    QVERIFY(error.contains(QStringLiteral("/nonexistent-dir/x.png")));
  }

  void figureSetForTheCli() {
    std::vector<std::string> written;
    const std::string dir = m_dir.filePath(QStringLiteral("set")).toStdString();
    QCOMPARE(write_figure_set(m_eval, dir, {"png", "svg", "pdf"}, 100, &written), 0);
    QCOMPARE(int(written.size()), 12);
    for (const char* stem : {"per-rank", "synced", "expected", "difference"})
      for (const char* ext : {"png", "svg", "pdf"})
        QVERIFY(QFileInfo(QString::fromStdString(dir) + '/' + stem + '.' + ext).size() > 0);
    QVERIFY(!QImage(QString::fromStdString(dir) + QStringLiteral("/per-rank.png")).isNull());
    QCOMPARE(write_figure_set(m_eval, dir, {"gif"}, 100, nullptr), 2);
  }

  void largeMatrixPaints() {
    // C = 1000: painted from the image with thinned labels, no crash, sensible size.
    HeatmapData d;
    d.classes = 1000;
    d.values.assign(1000 * 1000, 0);
    for (int i = 0; i < 1000; ++i) d.values[size_t(i) * 1001] = i;
    d.names.resize(1000);
    for (int i = 0; i < 1000; ++i) d.names[size_t(i)] = QString::number(i);
    d.rowObserved.assign(1000, 1);
    d.rowExpected.assign(1000, 1);
    d.rowExpected[500] = 2;
    test::markWrongRows(d);
    d.colObserved.assign(1000, 1);
    d.valueMax = 999;
    QImage img(900, 800, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::white);
    QPainter p(&img);
    paintHeatmap(p, d, HeatmapStyle{}, QRectF(0, 0, 900, 800));
    p.end();
    // The diagonal is drawn: pixels in the upper half of the map (its cells are up to 999),
    // on the blank (white) zero cells of a 1000-class matrix.
    const auto& table = colormapTable(HeatmapStyle{}.colormap);
    const std::set<QRgb> bright(table.begin() + 128, table.end());
    int diagonal = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) diagonal += bright.count(img.pixel(x, y) | 0xff000000);
    QVERIFY2(diagonal > 200, qPrintable(QString::number(diagonal)));
  }
};

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);  // fonts and paint devices; write_figure_set reuses it
  TestFigures t;
  return QTest::qExec(&t, argc, argv);
}
#include "test_figures.moc"

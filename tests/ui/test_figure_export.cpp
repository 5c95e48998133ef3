// The figure set as the CLI and "Export figure set" write it (every format in one pass, the
// per-rank panels' cells built once and released one at a time) equals the straightforward
// path: figureSet's figures, whole in memory, written one format at a time by writeFigure.
// PNG and SVG byte for byte, PDF but for its creation date; and the synced figure's PNG
// pixel for pixel against paintHeatmap of its one panel, painted here.
#include <QImageReader>
#include <QPainter>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <cmath>

#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_painter.h"
#include "ui/render/heatmap_source.h"

using namespace shardlens;
using namespace shardlens::render;

namespace {

const std::vector<FigureFormat> kFormats = {FigureFormat::Png, FigureFormat::Svg,
                                            FigureFormat::Pdf};

struct Case {
  Scenario scenario;
  MatrixOptions options;
  FigureSetOptions set;
  int dpi = 150;
};

Case caseOf(Scenario scenario, int dpi = 150) {
  Case c;
  c.scenario = std::move(scenario);
  c.dpi = dpi;
  return c;
}

// 120 classes, 4 ranks of 15,000 samples, mostly wrong predictions: the ranks' matrices
// are dense (most cells non-zero), so the per-rank figure keeps their cells aside.
Scenario denseRanks() {
  Scenario s;
  s.name = "dense-ranks";
  s.dataset = "synthetic:classes=120,per-class=500";
  s.predictor = "noisy:accuracy=0.1,seed=2";
  s.sampler.world_size = 4;
  s.loader.batch_size = 32;
  return s;
}

Scenario imagenetLike() {
  Scenario s;
  s.name = "imagenet-like";
  s.title = "1000 classes on 64 ranks";
  s.dataset = "synthetic:classes=1000,per-class=20";
  s.sampler.world_size = 64;
  s.sampler.shuffle = true;
  s.loader.batch_size = 32;
  return s;
}

QByteArray contents(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// A PDF without its /CreationDate line, the one thing two writes of a figure differ in.
QByteArray withoutDate(QByteArray pdf) {
  const qsizetype at = pdf.indexOf("/CreationDate");
  if (at >= 0) pdf.remove(at, pdf.indexOf('\n', at) - at);
  return pdf;
}

}  // namespace

Q_DECLARE_METATYPE(Case)

class TestFigureExport : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

 private slots:
  void initTestCase() { QVERIFY(m_dir.isValid()); }

  void setEqualsTheStraightforwardPath_data() {
    QTest::addColumn<Case>("c");
    Case padding = caseOf(load_preset("padding-duplicates"));
    QTest::newRow("padding lesson, 10 classes on 4 ranks") << padding;
    Case normalized = padding;
    normalized.options.normalization = Normalization::True;
    normalized.options.order = ClassOrder::Count;
    QTest::newRow("padding lesson, normalized by row, by count") << normalized;
    QTest::newRow("unsynced lesson: no synced matrix") << caseOf(load_preset("unsynced"));
    // Cells below a pixel: pooled images in every format.
    QTest::newRow("1000 classes, 64 ranks, shuffled") << caseOf(imagenetLike(), 100);
    Case chosen = caseOf(imagenetLike());
    chosen.set.ranks = {5, 0, 63, 5};
    chosen.set.vmaxRanks = 7;
    chosen.set.vmax = 40;
    QTest::newRow("1000 classes, ranks 5, 0, 63, 5, fixed ranges") << chosen;
    QTest::newRow("120 classes, dense ranks") << caseOf(denseRanks(), 100);
    Case denseChosen = caseOf(denseRanks());
    denseChosen.set.ranks = {2, 2, 0};
    QTest::newRow("120 classes, dense ranks 2, 2, 0") << denseChosen;
  }

  void setEqualsTheStraightforwardPath() {
    QFETCH(Case, c);
    const Evaluation e = simulate(c.scenario);
    const QString tag = QString::fromLatin1(QTest::currentDataTag());
    // The dense rows are what they say (dense cells are what the lazy path stores).
    if (tag.contains(QLatin1String("dense"))) QVERIFY(!rankHeatmap(e, 0, c.options).sparse());
    const QString newDir = m_dir.filePath(tag + QStringLiteral("/set"));
    const QString refDir = m_dir.filePath(tag + QStringLiteral("/reference"));
    QStringList written;
    QString error;
    QVERIFY2(writeFigureSet(e, newDir, kFormats, c.dpi, c.options, HeatmapStyle{}, c.set, &written,
                            &error),
             qPrintable(error));
    QVERIFY(QDir().mkpath(refDir));
    QStringList expected;
    for (const auto& [name, figure] : figureSet(e, c.options, HeatmapStyle{}, c.set)) {
      for (FigureFormat format : kFormats) {
        const QString file = name + QLatin1Char('.') + figureExtension(format);
        QVERIFY2(writeFigure(figure, refDir + QLatin1Char('/') + file, format, c.dpi, &error),
                 qPrintable(error));
        expected << newDir + QLatin1Char('/') + file;
      }
    }
    QCOMPARE(written, expected);
    for (const QString& path : written) {
      const QString name = QFileInfo(path).fileName();
      const QByteArray got = contents(path), want = contents(refDir + QLatin1Char('/') + name);
      QVERIFY2(!want.isEmpty(), qPrintable(name));
      if (name.endsWith(QLatin1String(".pdf")))
        QVERIFY2(withoutDate(got) == withoutDate(want), qPrintable(name));
      else
        QVERIFY2(got == want, qPrintable(name));
    }
  }

  // Independent of the figure code's panel painting: the synced figure is its one panel,
  // painted by paintHeatmap over the whole page with images built on demand.
  void syncedPngEqualsPaintHeatmap_data() {
    QTest::addColumn<Case>("c");
    QTest::newRow("padding lesson, 10 classes") << caseOf(load_preset("padding-duplicates"));
    QTest::newRow("1000 classes, pooled at 72 dpi") << caseOf(imagenetLike(), 72);
    QTest::newRow("1000 classes, one pixel per cell at 150 dpi") << caseOf(imagenetLike());
  }

  void syncedPngEqualsPaintHeatmap() {
    QFETCH(Case, c);
    const Evaluation e = simulate(c.scenario);
    const QString dir = m_dir.filePath(QString::fromLatin1(QTest::currentDataTag()));
    QString error;
    QVERIFY2(writeFigureSet(e, dir, {FigureFormat::Png}, c.dpi, c.options, HeatmapStyle{}, c.set,
                            nullptr, &error),
             qPrintable(error));
    QImageReader reader(dir + QStringLiteral("/synced.png"));
    const QImage got = reader.read().convertToFormat(QImage::Format_ARGB32_Premultiplied);
    QVERIFY(!got.isNull());

    // The synced panel as the set shows it: the scenario's title, its own colour range (the
    // window's), said on its colour bar.
    HeatmapData d = syncedHeatmap(e, c.options);
    d.rangeNote = QStringLiteral("0–%1 per view").arg(formatValue(d.valueMax, d.integral));
    d.title = figureTitle(e, d.title);
    Figure one;
    one.panels.push_back(d);
    const QSizeF pts = figureSizePoints(one);
    const double scale = c.dpi / 72.0;
    QImage want(QSize(int(std::ceil(pts.width() * scale)), int(std::ceil(pts.height() * scale))),
                QImage::Format_ARGB32_Premultiplied);
    want.fill(Qt::white);
    {
      QPainter p(&want);
      p.setRenderHint(QPainter::TextAntialiasing);
      p.scale(scale, scale);
      paintHeatmap(p, d, HeatmapStyle{}, QRectF(QPointF(0, 0), pts));
    }
    QCOMPARE(got.size(), want.size());
    int differ = 0;
    for (int y = 0; y < want.height(); ++y)
      for (int x = 0; x < want.width(); ++x) differ += got.pixel(x, y) != want.pixel(x, y);
    QCOMPARE(differ, 0);
  }

  // One output that cannot be written fails the figure with its path and saves nothing.
  void unwritableOutputSavesNothing() {
    const Evaluation e = simulate(load_preset("padding-duplicates"));
    Figure f;
    f.panels.push_back(syncedHeatmap(e, {}));
    const QString png = m_dir.filePath(QStringLiteral("lone.png"));
    const QString bad = QStringLiteral("/nonexistent-dir/lone.svg");
    QStringList written;
    QString error;
    QVERIFY(!writeFigureFormats(f, {{png, FigureFormat::Png}, {bad, FigureFormat::Svg}}, 72,
                                &written, &error));
    QVERIFY2(error.startsWith(bad + QStringLiteral(": ")), qPrintable(error));
    QVERIFY(written.isEmpty());
    QVERIFY(!QFile::exists(png));
  }

  // Class names and titles with control characters (ESC, BEL: a terminal colour code), a
  // noncharacter and markup still make well-formed XML: QSvgGenerator escapes
  // & < > " but would write the rest as they are, which no XML parser opens.
  void hostileNamesGiveWellFormedSvg() {
    const std::vector<std::string> names = {
        "a\x1b[31mb\x07", "x\xEF\xBF\xBEy\xEF\xBF\xBFz",         "<b>&amp;\"q\"</b>", "tab\tin",
        "\x01\x02\x1f",   "caf\xC3\xA9 \xE2\x82\xAC\xEF\xBF\xBD"};
    Scenario s;
    s.name = "hostile";
    s.title = "title \x1b]0;owned\x07 \x0c";
    s.dataset = "synthetic:classes=" + std::to_string(names.size()) + ",per-class=10";
    s.sampler.world_size = 2;
    Evaluation e = simulate(s);
    e.meta.class_names = names;
    const QString dir = m_dir.filePath(QStringLiteral("hostile"));
    std::vector<std::string> written;
    QCOMPARE(write_figure_set(e, dir.toStdString(), {"svg"}, 72, &written), 0);
    QVERIFY(written.size() >= 3);
    for (const std::string& path : written) {
      const QByteArray svg = contents(QString::fromStdString(path));
      QVERIFY2(!svg.isEmpty(), path.c_str());
      QXmlStreamReader xml(svg);
      QStringList texts;
      while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isCharacters()) texts << xml.text().toString();
      }
      QVERIFY2(!xml.hasError(),
               qPrintable(QString::fromStdString(path) + QStringLiteral(": ") + xml.errorString()));
      const QString all = texts.join(QLatin1Char('|'));
      // The names are there, their invalid characters replaced, their markup as text.
      for (const char* part : {"[31mb", "<b>&amp;\"q\"</b>", "caf\xC3\xA9 \xE2\x82\xAC"})
        QVERIFY2(all.contains(QString::fromUtf8(part)), qPrintable(path.c_str() + all));
      QVERIFY2(all.contains(QStringLiteral("a\uFFFD[31mb\uFFFD")), qPrintable(all));
      QVERIFY2(all.contains(QStringLiteral("x\uFFFDy\uFFFDz")), qPrintable(all));
      QVERIFY(!svg.contains('\x1b') && !svg.contains('\x07') && !svg.contains('\x01'));
    }
  }
};

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  TestFigureExport t;
  return QTest::qExec(&t, argc, argv);
}
#include "test_figure_export.moc"

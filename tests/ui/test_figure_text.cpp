// Every piece of text of an exported figure is whole and inside the figure. A paint device
// whose engine records each text item with its box in figure coordinates checks what the
// painter really drew, independent of the layout code that placed it.
#include <QPaintDevice>
#include <QPaintEngine>
#include <QtTest>
#include <algorithm>
#include <climits>
#include <cmath>

#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_painter.h"
#include "ui/render/heatmap_source.h"

using namespace shardlens;
using namespace shardlens::render;

namespace {

struct TextItem {
  QString text;
  QRectF box;  // in the device's coordinates (figure points)
};

class RecordingEngine : public QPaintEngine {
 public:
  explicit RecordingEngine(std::vector<TextItem>* items)
      : QPaintEngine(QPaintEngine::AllFeatures), m_items(items) {}
  bool begin(QPaintDevice*) override { return true; }
  bool end() override { return true; }
  void updateState(const QPaintEngineState& s) override {
    if (s.state() & QPaintEngine::DirtyTransform) m_transform = s.transform();
  }
  void drawPixmap(const QRectF&, const QPixmap&, const QRectF&) override {}
  void drawImage(const QRectF&, const QImage&, const QRectF&, Qt::ImageConversionFlags) override {}
  void drawPath(const QPainterPath&) override {}
  void drawPolygon(const QPointF*, int, PolygonDrawMode) override {}
  void drawRects(const QRectF*, int) override {}
  void drawLines(const QLineF*, int) override {}
  void drawPoints(const QPointF*, int) override {}
  void drawEllipse(const QRectF&) override {}
  void drawTextItem(const QPointF& p, const QTextItem& item) override {
    // The glyph run's box: from the baseline up by the ascent, down by the descent.
    const QRectF logical(p.x(), p.y() - item.ascent(), item.width(),
                         item.ascent() + item.descent());
    const QRectF box = m_transform.mapRect(logical);
    // One drawText is split into runs by script ("Σ" Greek, " row" Latin); a run that
    // continues the previous one on its line (in the painter's coordinates) joins it.
    if (!m_items->empty() && m_transform == m_lastTransform &&
        std::abs(m_lastLogical.right() - logical.left()) < 0.5 &&
        std::abs(m_lastLogical.bottom() - logical.bottom()) < 3) {
      TextItem& last = m_items->back();
      last.text += item.text();
      last.box = last.box.united(box);
      m_lastLogical = m_lastLogical.united(logical);
      return;
    }
    m_lastTransform = m_transform;
    m_lastLogical = logical;
    m_items->push_back({item.text(), box});
  }
  Type type() const override { return QPaintEngine::User; }

 private:
  std::vector<TextItem>* m_items;
  QTransform m_transform;
  QTransform m_lastTransform;
  QRectF m_lastLogical;
};

// A device one point per unit, as every export paints.
class RecordingDevice : public QPaintDevice {
 public:
  explicit RecordingDevice(QSizeF size) : m_size(size.toSize()), m_engine(&items) {}
  QPaintEngine* paintEngine() const override { return &m_engine; }
  std::vector<TextItem> items;

 protected:
  int metric(PaintDeviceMetric m) const override {
    switch (m) {
      case PdmWidth:
        return m_size.width();
      case PdmHeight:
        return m_size.height();
      case PdmWidthMM:
        return int(m_size.width() * 25.4 / 72);
      case PdmHeightMM:
        return int(m_size.height() * 25.4 / 72);
      case PdmDpiX:
      case PdmDpiY:
      case PdmPhysicalDpiX:
      case PdmPhysicalDpiY:
        return 72;
      case PdmDepth:
        return 32;
      case PdmNumColors:
        return INT_MAX;
      case PdmDevicePixelRatio:
        return 1;
      case PdmDevicePixelRatioScaled:
        return int(QPaintDevice::devicePixelRatioFScale());
      default:
        return 0;
    }
  }

 private:
  QSize m_size;
  mutable RecordingEngine m_engine;
};

std::vector<TextItem> textOf(const Figure& f, QSizeF* size = nullptr) {
  const QSizeF pts = figureSizePoints(f);
  if (size) *size = pts;
  RecordingDevice device(pts);
  QPainter p(&device);
  paintFigure(p, f, QRectF(QPointF(0, 0), pts));
  p.end();
  return device.items;
}

// All text drawn, joined, so a string split into glyph runs (font fallback) still matches.
QString joined(const std::vector<TextItem>& items) {
  QString all;
  for (const TextItem& t : items) all += t.text + QLatin1Char('\n');
  return all;
}

bool allInside(const std::vector<TextItem>& items, QSizeF size, QString* which) {
  // Half a point of slack for the rounding of glyph advances.
  const QRectF page = QRectF(QPointF(0, 0), size).adjusted(-0.5, -0.5, 0.5, 0.5);
  for (const TextItem& t : items) {
    if (!page.contains(t.box)) {
      *which = QStringLiteral("'%1' at (%2, %3, %4 x %5) in %6 x %7")
                   .arg(t.text)
                   .arg(t.box.x())
                   .arg(t.box.y())
                   .arg(t.box.width())
                   .arg(t.box.height())
                   .arg(size.width())
                   .arg(size.height());
      return false;
    }
  }
  return true;
}

// Class c of C classes padded on `world` ranks: DistributedSampler repeats the first indices.
Evaluation paddedEvaluation(int classes, int perClass, int world) {
  Scenario s;
  s.name = "padded";
  s.dataset =
      "synthetic:classes=" + std::to_string(classes) + ",per-class=" + std::to_string(perClass);
  s.sampler.world_size = world;
  s.loader.batch_size = 16;
  return simulate(s);
}

}  // namespace

class TestFigureText : public QObject {
  Q_OBJECT

 private slots:
  // The check itself: text running off the right edge is caught, whole text inside is not.
  void recorderSeesOverflow() {
    RecordingDevice device(QSizeF(100, 40));
    QPainter p(&device);
    p.setFont(heatmapFont(HeatmapStyle{}));
    p.drawText(QPointF(10, 20), QStringLiteral("fits"));
    p.drawText(QPointF(80, 20), QStringLiteral("runs off the edge"));
    p.end();
    QCOMPARE(int(device.items.size()), 2);
    QString which;
    QVERIFY(!allInside(device.items, QSizeF(100, 40), &which));
    QVERIFY(which.contains(QStringLiteral("runs off")));
    device.items.pop_back();
    QVERIFY(allInside(device.items, QSizeF(100, 40), &which));
  }

  // The padding lesson's figure set: every text item inside, and the figures of the synced
  // matrix say "2 rows ≠ expected" whole next to their long title (the difference figure's
  // was cut to "⚠ 2 ≠"). One row per figure of the set.
  void paddingLessonTextInside_data() {
    QTest::addColumn<QString>("figure");
    QTest::addColumn<bool>("saysRowsWrong");
    QTest::newRow("per-rank") << QStringLiteral("per-rank") << false;
    QTest::newRow("synced") << QStringLiteral("synced") << true;
    QTest::newRow("expected") << QStringLiteral("expected") << false;
    QTest::newRow("difference") << QStringLiteral("difference") << true;
  }

  void paddingLessonTextInside() {
    QFETCH(QString, figure);
    QFETCH(bool, saysRowsWrong);
    const Evaluation e = simulate(load_preset("padding-duplicates"));
    const auto set = figureSet(e, {}, HeatmapStyle{}, {});
    const auto it = std::find_if(set.begin(), set.end(),
                                 [&](const auto& named) { return named.first == figure; });
    QVERIFY2(it != set.end(), qPrintable(figure));
    QSizeF size;
    const auto items = textOf(it->second, &size);
    QVERIFY(!items.empty());
    QString which;
    QVERIFY2(allInside(items, size, &which), qPrintable(which));
    const QString all = joined(items);
    if (saysRowsWrong) QVERIFY2(all.contains(QStringLiteral("2 rows ≠ expected")), qPrintable(all));
    // The whole title is there, not an elided one.
    if (figure == QLatin1String("difference")) {
      QVERIFY2(!all.contains(QChar(0x2026)), qPrintable(all));
      for (const char* word : {"Padding", "duplicates:", "510", "samples", "ranks", "expected"})
        QVERIFY2(all.contains(QString::fromUtf8(word)), word);
    }
  }

  // The rows above are the whole set: a new figure gets a row of its own.
  void paddingLessonFigureSetIsTheFour() {
    const Evaluation e = simulate(load_preset("padding-duplicates"));
    QStringList names;
    for (const auto& [name, figure] : figureSet(e, {}, HeatmapStyle{}, {})) names << name;
    QCOMPARE(names, (QStringList{QStringLiteral("per-rank"), QStringLiteral("synced"),
                                 QStringLiteral("expected"), QStringLiteral("difference")}));
  }

  // A title far wider than its panel wraps rather than leaving the figure.
  void longTitleWraps() {
    const Evaluation e = paddedEvaluation(3, 3, 4);
    Figure f;
    HeatmapData d = syncedHeatmap(e, {});
    d.title = QStringLiteral(
        "A very long title of a confusion matrix figure that no single line of a small panel "
        "could ever hold without running off its right edge");
    f.panels.push_back(d);
    QSizeF size;
    const auto items = textOf(f, &size);
    QString which;
    QVERIFY2(allInside(items, size, &which), qPrintable(which));
    const QString all = joined(items);
    QVERIFY(all.contains(QStringLiteral("right edge")));
    QVERIFY(all.contains(mismatchNote(d)));
  }

  // Above 30 classes labels are thinned, yet the wrong row keeps its name and its sums, and
  // no "Σ" header stands without values.
  void wrongRowsNamedWhenThinned() {
    const Evaluation e = paddedEvaluation(100, 5, 3);  // 500 on 3 ranks: one duplicate
    const auto rows = e.synced->row_sums();
    std::vector<int> wrong;
    for (int c = 0; c < 100; ++c)
      if (rows[size_t(c)] != e.meta.class_counts[size_t(c)]) wrong.push_back(c);
    QCOMPARE(int(wrong.size()), 1);
    const int c = wrong.front();
    const auto figures = figureSet(e, {}, HeatmapStyle{}, {});
    const Figure& synced = figures[1].second;
    QCOMPARE(figures[1].first, QStringLiteral("synced"));
    QSizeF size;
    const auto items = textOf(synced, &size);
    QString which;
    QVERIFY2(allInside(items, size, &which), qPrintable(which));
    const auto has = [&](const QString& text) {
      return std::any_of(items.begin(), items.end(),
                         [&](const TextItem& t) { return t.text == text; });
    };
    QVERIFY2(has(QString::number(c)), qPrintable(QString::number(c)));
    const QString sums = QStringLiteral("%1 ≠ %2")
                             .arg(qlonglong(rows[size_t(c)]))
                             .arg(qlonglong(e.meta.class_counts[size_t(c)]));
    QVERIFY2(joined(items).contains(sums), qPrintable(sums + joined(items)));
    // Σ col only with column sums beside it: at 100 classes in 640 pt they do not fit.
    if (has(QStringLiteral("Σ col"))) {
      int numbers = 0;
      for (const TextItem& t : items) numbers += t.text.toInt() > 0 ? 1 : 0;
      QVERIFY(numbers > 100);
    }
    QVERIFY(!has(QStringLiteral("Σ col")));
    QVERIFY2(has(QStringLiteral("Σ row")), qPrintable(joined(items)));  // with the wrong row's sums
    // The colour bar says what it measures.
    QVERIFY(has(QStringLiteral("count")));
  }

  void colourBarLabelled() {
    const Evaluation e = paddedEvaluation(3, 3, 4);
    MatrixOptions o;
    o.normalization = Normalization::True;
    const auto figures = figureSet(e, o, HeatmapStyle{}, {});
    QCOMPARE(figures.back().first, QStringLiteral("difference"));
    QVERIFY(joined(textOf(figures[1].second)).contains(QStringLiteral("fraction of row\n")));
    QVERIFY(joined(textOf(figures.back().second)).contains(QStringLiteral("Δ fraction of row\n")));
  }

  // 64 ranks: the per-rank figure fits a page (it was 31 x 117 inches), its text inside.
  void manyRanksFitAPage() {
    const Evaluation e = paddedEvaluation(10, 51, 64);
    const Figure ranks = figureSet(e, {}, HeatmapStyle{}, {}).front().second;
    QCOMPARE(int(ranks.panels.size()), 64);
    QSizeF size;
    const auto items = textOf(ranks, &size);
    QVERIFY2(size.width() <= kFigurePage.width() + 1 && size.height() <= kFigurePage.height() + 1,
             qPrintable(QStringLiteral("%1 x %2").arg(size.width()).arg(size.height())));
    QString which;
    QVERIFY2(allInside(items, size, &which), qPrintable(which));
    for (int r : {0, 31, 63}) QVERIFY(joined(items).contains(QStringLiteral("Rank %1\n").arg(r)));
  }

  // A rank selection, in its order, and a fixed colour range.
  void ranksAndFixedRange() {
    const Evaluation e = paddedEvaluation(10, 51, 8);
    FigureSetOptions set;
    set.ranks = {0, 1, 5};
    set.vmax = 1000;
    set.vmaxRanks = 500;
    set.vmaxDifference = 7;
    const auto figures = figureSet(e, {}, HeatmapStyle{}, set);
    const Figure& ranks = figures[0].second;
    QCOMPARE(int(ranks.panels.size()), 3);
    QCOMPARE(ranks.panels[2].title, QStringLiteral("Rank 5"));
    for (const HeatmapData& d : ranks.panels) QCOMPARE(d.valueMax, 500.0);
    QCOMPARE(figures[1].second.panels[0].valueMax, 1000.0);
    QCOMPARE(figures[2].second.panels[0].valueMax, 1000.0);
    QCOMPARE(figures[3].second.panels[0].valueMax, 7.0);
    // The colour bars print the fixed ends.
    QVERIFY(joined(textOf(figures[1].second)).contains(QStringLiteral("1000\n")));
    // The difference bar's ends are signed: a true minus and an explicit plus.
    QVERIFY(joined(textOf(figures[3].second)).contains(QStringLiteral("\u22127\n")));
    QVERIFY(joined(textOf(figures[3].second)).contains(QStringLiteral("+7\n")));
  }
};

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  TestFigureText t;
  return QTest::qExec(&t, argc, argv);
}
#include "test_figure_text.moc"

// Every piece of text of an exported figure is whole and inside the figure. A paint device
// whose engine records each text item with its box in figure coordinates, and the clip it
// was drawn under, checks what the painter really drew, independent of the layout code that
// placed it: text outside the page, or cut by a clip (a band too small for it), fails.
#include <QPaintDevice>
#include <QPaintEngine>
#include <QRegularExpression>
#include <QtTest>
#include <algorithm>
#include <climits>
#include <cmath>

#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/validations.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_painter.h"
#include "ui/render/heatmap_source.h"

using namespace shardlens;
using namespace shardlens::render;

namespace {

struct TextItem {
  QString text;
  QRectF box;   // in the device's coordinates (figure points)
  QRectF clip;  // the clip's bounds it was drawn under, in the same coordinates; null: none
  bool rotated = false;  // drawn turned (upwards), not across
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
    // What the painter clips to now (a drawText into a rectangle too small for its text
    // clips to that rectangle): its bounds, in device coordinates.
    QRectF clip;
    if (painter() && painter()->hasClipping())
      clip = painter()->combinedTransform().mapRect(painter()->clipBoundingRect());
    const bool rotated = std::abs(m_transform.m12()) > 1e-9 || std::abs(m_transform.m21()) > 1e-9;
    m_items->push_back({item.text(), box, clip, rotated});
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

QString describe(const QRectF& r) {
  return QStringLiteral("(%1, %2, %3 x %4)").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}

// Every text item inside the page and, when drawn under a clip, inside the clip: whole.
bool allInside(const std::vector<TextItem>& items, QSizeF size, QString* which) {
  // Half a point of slack for the rounding of glyph advances.
  const QRectF page = QRectF(QPointF(0, 0), size).adjusted(-0.5, -0.5, 0.5, 0.5);
  for (const TextItem& t : items) {
    if (!page.contains(t.box)) {
      *which = QStringLiteral("'%1' at %2 in %3 x %4")
                   .arg(t.text, describe(t.box))
                   .arg(size.width())
                   .arg(size.height());
      return false;
    }
    // A point of slack: a clip set in whole pixels, glyphs' side bearings.
    if (!t.clip.isNull() && !t.clip.adjusted(-1, -1, 1, 1).contains(t.box)) {
      *which = QStringLiteral("'%1' at %2 cut by its clip %3")
                   .arg(t.text, describe(t.box), describe(t.clip));
      return false;
    }
  }
  return true;
}

// The text items equal to `text`.
std::vector<TextItem> itemsOf(const std::vector<TextItem>& items, const QString& text) {
  std::vector<TextItem> out;
  for (const TextItem& t : items)
    if (t.text == text) out.push_back(t);
  return out;
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

// C classes on 64 ranks, each rank stopped after a few batches (limit_val_batches): about
// half the samples evaluated, nearly every row short of its count and marked.
Evaluation limitedEvaluation(int classes) {
  Scenario s;
  s.name = "limited";
  s.title = "Batch limit on 64 ranks";
  const int perClass = classes >= 1000 ? 20 : 100;
  s.dataset =
      "synthetic:classes=" + std::to_string(classes) + ",per-class=" + std::to_string(perClass);
  s.predictor = "noisy:accuracy=0.7,seed=3";
  s.sampler.world_size = 64;
  s.loader.batch_size = classes >= 1000 ? 32 : 4;
  s.loader.limit = BatchLimit::parse(classes >= 1000 ? "5" : "2");
  return simulate(s);
}

// The figure of the set named `name`.
const Figure& figureNamed(const std::vector<std::pair<QString, Figure>>& set, const QString& name) {
  const auto it =
      std::find_if(set.begin(), set.end(), [&](const auto& named) { return named.first == name; });
  Q_ASSERT(it != set.end());
  return it->second;
}

// The texts of the figure's titles: the figure's own and its panels'.
QStringList titlesOf(const Figure& f) {
  QStringList titles{f.title};
  for (const HeatmapData& d : f.panels) titles << d.title;
  return titles;
}

// Drawn text with each line break a space: a title wrapped over two lines reads whole.
QString flowed(const std::vector<TextItem>& items) {
  return joined(items).replace(QLatin1Char('\n'), QLatin1Char(' '));
}

}  // namespace

class TestFigureText : public QObject {
  Q_OBJECT

 private slots:
  // A caption too long for a line breaks between its " — " parts where they fit a line,
  // never inside "Synced − expected" (it read "… — Synced −" / "expected").
  void titlesBreakBetweenTheirParts() {
    HeatmapData d;
    d.title = QStringLiteral(
        "Accelerate: prepare() of a loader that already has a DistributedSampler — Synced − "
        "expected");
    HeatmapStyle s;
    QFont font = heatmapFont(s, true);
    font.setPixelSize(s.fontPixels + 2);  // a full-size panel's title font
    // Wide enough for "… — Synced −", where a break between words fell.
    const double width =
        QFontMetricsF(font).horizontalAdvance(d.title.section(QStringLiteral(" — "), 0, 0) +
                                              QStringLiteral(" — Synced −")) +
        2;
    const TitleLines t = layoutTitle(d, s, width, 10 * QFontMetricsF(font).height());
    QCOMPARE(t.lines,
             QStringList({QStringLiteral("Accelerate: prepare() of a loader that already has a "
                                         "DistributedSampler —"),
                          QStringLiteral("Synced − expected")}));
  }

  // An all-zero difference has no range to span: its bar says "all 0", not "±1".
  void anAllZeroRangeIsSaid() {
    HeatmapData d;
    d.classes = 2;
    d.values = {0, 0, 0, 0};
    d.diverging = true;
    d.valueMax = 0;
    noteColourRange(d, ColourRange::Own);
    QCOMPARE(d.rangeNote, QStringLiteral("all 0"));
    d.valueMax = 7;
    noteColourRange(d, ColourRange::Own);
    QCOMPARE(d.rangeNote, QStringLiteral("±7 per view"));
    // A run's shared range: its epochs, or the validations of one epoch (not "over epochs").
    noteColourRange(d, ColourRange::OverEpochs);
    QCOMPARE(d.rangeNote, QStringLiteral("±7 over the run"));
  }

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

  // The check of clips: text cut by a clip rectangle, or by a drawText band lower than the
  // text, is caught; text whole inside its clip is not.
  void recorderSeesClipping() {
    RecordingDevice device(QSizeF(200, 100));
    QPainter p(&device);
    p.setFont(heatmapFont(HeatmapStyle{}));
    p.save();
    p.setClipRect(QRectF(0, 20, 200, 30));
    p.drawText(QPointF(10, 22), QStringLiteral("cut at the top"));  // its ascent above y = 20
    p.drawText(QPointF(10, 40), QStringLiteral("whole"));
    p.restore();
    p.drawText(QRectF(10, 60, 180, 4), Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("squeezed"));
    p.drawText(QPointF(10, 90), QStringLiteral("free"));
    p.end();
    QCOMPARE(int(device.items.size()), 4);
    QString which;
    for (const TextItem& t : device.items) {
      const bool whole = t.text == QLatin1String("whole") || t.text == QLatin1String("free");
      QCOMPARE(allInside({t}, QSizeF(200, 100), &which), whole);
      if (!whole) QVERIFY2(which.contains(QStringLiteral("clip")), qPrintable(which));
    }
  }

  // A batch limit on 64 ranks marks nearly every row: at 1000 classes the first wrong row's
  // sums sat across the grid's top edge and were cut. Every text of every figure whole and
  // inside, at 10 and 1000 classes; the first wrong row's sums there in full.
  void batchLimitTextInside_data() {
    QTest::addColumn<int>("classes");
    QTest::addColumn<QString>("figure");
    for (int classes : {10, 1000})
      for (const char* figure : {"per-rank", "synced", "expected", "difference"})
        QTest::addRow("%d classes, %s", classes, figure) << classes << QString::fromLatin1(figure);
  }

  void batchLimitTextInside() {
    QFETCH(int, classes);
    QFETCH(QString, figure);
    const Evaluation e = limitedEvaluation(classes);
    const auto set = figureSet(e, {}, HeatmapStyle{}, {});
    QSizeF size;
    const auto items = textOf(figureNamed(set, figure), &size);
    QVERIFY(!items.empty());
    QString which;
    QVERIFY2(allInside(items, size, &which), qPrintable(which));
    if (figure != QLatin1String("synced")) return;
    // The rows' sums against the dataset's counts, from the matrix itself.
    const auto rows = e.synced->row_sums();
    std::vector<int> wrong;
    for (int c = 0; c < classes; ++c)
      if (rows[size_t(c)] != e.meta.class_counts[size_t(c)]) wrong.push_back(c);
    QVERIFY(int(wrong.size()) > classes / 2);
    // The topmost line of sums (at the grid's top edge, whole) is a wrong row's: the first
    // one at 10 classes, where every row has its line; at 1000 classes, where a line spans
    // tens of rows, the worst of those whose lines meet there: one of the first 5% of rows,
    // no better than any wrong row of the first 1% (all within its line).
    const QRegularExpression sumsLine(QStringLiteral("^\\d+ ≠ \\d+$"));
    const TextItem* top = nullptr;
    for (const TextItem& t : items)
      if (sumsLine.match(t.text).hasMatch() && (!top || t.box.top() < top->box.top())) top = &t;
    QVERIFY(top);
    const auto sums = [&](int c) {
      return QStringLiteral("%1 ≠ %2")
          .arg(qlonglong(rows[size_t(c)]))
          .arg(qlonglong(e.meta.class_counts[size_t(c)]));
    };
    if (classes <= 10) {
      QCOMPARE(top->text, sums(wrong.front()));
      return;
    }
    const auto error = [&](int c) {
      return std::abs(double(rows[size_t(c)]) - double(e.meta.class_counts[size_t(c)]));
    };
    int shown = -1;
    for (int w : wrong)
      if (w < classes / 20 && sums(w) == top->text && (shown < 0 || error(w) > error(shown)))
        shown = w;
    QVERIFY2(shown >= 0, qPrintable(top->text));
    for (int w : wrong)
      if (w < classes / 100) QVERIFY2(error(w) <= error(shown), qPrintable(sums(w)));
  }

  // Four ranks in a 2 x 2 grid, eight in 3 x 3 (it was one row of four, 4950 x 1153 px): each
  // row of panels starts under the first, and the figure is about as tall as wide.
  void rankGridNearSquare_data() {
    QTest::addColumn<int>("world");
    QTest::addColumn<int>("columns");
    QTest::newRow("2 ranks: 2 x 1") << 2 << 2;
    QTest::newRow("3 ranks: 2 x 2") << 3 << 2;
    QTest::newRow("4 ranks: 2 x 2") << 4 << 2;
    QTest::newRow("6 ranks: 3 x 2") << 6 << 3;
    QTest::newRow("8 ranks: 3 x 3") << 8 << 3;
  }

  void rankGridNearSquare() {
    QFETCH(int, world);
    QFETCH(int, columns);
    QCOMPARE(rankFigureColumns(world), columns);
    const Evaluation e = paddedEvaluation(10, 51, world);
    const Figure ranks = figureSet(e, {}, HeatmapStyle{}, {}).front().second;
    QSizeF size;
    const auto items = textOf(ranks, &size);
    QString which;
    QVERIFY2(allInside(items, size, &which), qPrintable(which));
    std::vector<QRectF> title;  // each panel's title, by rank
    for (int r = 0; r < world; ++r) {
      const auto found = itemsOf(items, QStringLiteral("Rank %1").arg(r));
      QCOMPARE(int(found.size()), 1);
      title.push_back(found.front().box);
    }
    for (int r = 1; r < world; ++r) {
      const QRectF& first = title[size_t(r - r % columns)];  // its row's first panel
      if (r % columns == 0) {  // a new row: under the previous row, at the first column
        QCOMPARE(title[size_t(r)].left(), title[0].left());
        QVERIFY(title[size_t(r)].top() > title[size_t(r - columns)].bottom() + 100);
      } else {  // beside the previous panel, at the row's height
        QCOMPARE(title[size_t(r)].top(), first.top());
        QVERIFY(title[size_t(r)].left() > title[size_t(r - 1)].right() + 100);
      }
    }
    const int rows = (world + columns - 1) / columns;
    const double aspect = size.width() / size.height();
    QVERIFY2(aspect > 0.7 * columns / rows && aspect < 1.4 * columns / rows,
             qPrintable(QStringLiteral("%1 x %2").arg(size.width()).arg(size.height())));
  }

  // Every rank's panel names its axes: "True" turned up the rows, "Predicted" across under
  // the columns, both below the panel's title.
  void rankPanelsNameTheirAxes() {
    const Evaluation e = paddedEvaluation(10, 51, 4);
    const auto items = textOf(figureSet(e, {}, HeatmapStyle{}, {}).front().second);
    const auto trues = itemsOf(items, QStringLiteral("True"));
    const auto predicted = itemsOf(items, QStringLiteral("Predicted"));
    QCOMPARE(int(trues.size()), 4);
    QCOMPARE(int(predicted.size()), 4);
    for (int r = 0; r < 4; ++r) {
      const QRectF title = itemsOf(items, QStringLiteral("Rank %1").arg(r)).front().box;
      QVERIFY(trues[size_t(r)].rotated);
      QVERIFY(!predicted[size_t(r)].rotated);
      QVERIFY(trues[size_t(r)].box.top() > title.bottom());
      QVERIFY(predicted[size_t(r)].box.top() > trues[size_t(r)].box.bottom() - 1);
      QVERIFY(predicted[size_t(r)].box.left() > trues[size_t(r)].box.right());
    }
  }

  // Class numbers fit across their columns and stay unturned (they stood on end); names too
  // long for their column are turned up. Only the axis title and the colour bar's label
  // are turned besides.
  void columnLabelsTurnOnlyWhenLong() {
    const Evaluation e = paddedEvaluation(10, 51, 4);
    const auto set = figureSet(e, {}, HeatmapStyle{}, {});
    for (const QString name : {QStringLiteral("per-rank"), QStringLiteral("synced")}) {
      const Figure& f = figureNamed(set, name);
      const auto items = textOf(f);
      const QStringList turnable{QStringLiteral("True"), colorBarLabel(f.panels.front(), f.style)};
      for (const TextItem& t : items)
        QVERIFY2(!t.rotated || turnable.contains(t.text), qPrintable(name + ": " + t.text));
      // Each class number below the grid as well as beside it: more than one, unturned.
      QVERIFY2(itemsOf(items, QStringLiteral("9")).size() >= 2, qPrintable(name));
    }

    // CIFAR-10's names: "automobile" is wider than its column of a 10-class figure.
    auto labels = std::make_shared<Labels>(synthetic_counts(std::vector<int64_t>(10, 6)));
    labels->class_names = {"airplane", "automobile", "bird",  "cat",  "deer",
                           "dog",      "frog",       "horse", "ship", "truck"};
    const std::vector<int32_t> predictions(labels->targets.begin(), labels->targets.end());
    Scenario s;
    s.name = "named";
    s.sampler.world_size = 4;
    s.loader.batch_size = 4;
    const Evaluation named = evaluate(s, make_inputs(labels, predictions));
    const auto items =
        textOf(figureNamed(figureSet(named, {}, HeatmapStyle{}, {}), QStringLiteral("synced")));
    const auto automobile = itemsOf(items, QStringLiteral("automobile"));
    QCOMPARE(int(automobile.size()), 2);  // the row's label across, the column's turned up
    QVERIFY(automobile[0].rotated != automobile[1].rotated);
  }

  // One evaluation of several (validations of an epoch, epochs of a run file) names itself
  // in every figure's title and on the page: the four validations' figures differed only
  // in their numbers.
  void figuresNameTheirEvaluation() {
    const std::vector<Evaluation> all =
        simulate_validations(load_preset("repeated-validation-subset"));
    QCOMPARE(int(all.size()), 4);
    const Evaluation& e = all[2];  // the lesson's epoch 1, its third validation
    const QString which = QStringLiteral("epoch 1, validation 2");
    for (const auto& [name, figure] : figureSet(e, {}, HeatmapStyle{}, {})) {
      const QStringList titles = titlesOf(figure);
      // The per-rank figure's own title, the others' one panel title.
      const QString title = name == QLatin1String("per-rank") ? titles.front() : titles[1];
      QVERIFY2(title.endsWith(QStringLiteral(" — ") + which), qPrintable(name + ": " + title));
      QVERIFY2(flowed(textOf(figure)).contains(which), qPrintable(name));
    }
    // An epoch of a run file of three epochs.
    Evaluation epoch = simulate(load_preset("padding-duplicates"));
    epoch.meta.epoch = 2;
    epoch.provenance.epochs = 3;
    epoch.provenance.epoch_index = 2;
    for (const auto& [name, figure] : figureSet(epoch, {}, HeatmapStyle{}, {}))
      QVERIFY2(titlesOf(figure).join(QLatin1Char('|')).contains(QStringLiteral(" — epoch 2")),
               qPrintable(name));
    // Its epoch 0 alike: one of three.
    epoch.meta.epoch = 0;
    QVERIFY(figureTitle(epoch, QStringLiteral("Synced")).endsWith(QStringLiteral(" — epoch 0")));
  }

  // A lone evaluation names its epoch when it is not the first (the sampler's shuffle
  // depends on it), and says nothing of epochs otherwise.
  void loneEvaluationNamesALaterEpoch() {
    Scenario s = load_preset("padding-duplicates");
    const Evaluation first = simulate(s);
    for (const auto& [name, figure] : figureSet(first, {}, HeatmapStyle{}, {}))
      QVERIFY2(!titlesOf(figure).join(QLatin1Char('|')).contains(QStringLiteral("epoch")),
               qPrintable(name));
    s.sampler.epoch = 3;
    const Evaluation third = simulate(s);
    for (const auto& [name, figure] : figureSet(third, {}, HeatmapStyle{}, {}))
      QVERIFY2(titlesOf(figure).join(QLatin1Char('|')).contains(QStringLiteral(" — epoch 3")),
               qPrintable(name));
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
    // The colour bar says what it measures, and its range.
    QVERIFY(joined(items).contains(QStringLiteral("count, 0–")));
  }

  // A colour bar too short for its whole label keeps the range note (which range the colours
  // span, which the ticks cannot say) and drops the quantity's name first, instead of eliding
  // the note away ("count, 0–50 per…").
  void shortColourBarKeepsTheRange() {
    HeatmapData d;
    d.valueLabel = QStringLiteral("count");
    d.valueMax = 50;
    d.integral = true;
    d.rangeNote = QStringLiteral("0–50 per view");
    const HeatmapStyle s;
    const QFontMetricsF fm(heatmapFont(s));
    const QString whole = QStringLiteral("count, 0–50 per view");
    QCOMPARE(colorBarLabel(d, s), whole);
    QCOMPARE(fittedColorBarLabel(d, s, fm, fm.horizontalAdvance(whole) + 1), whole);
    const double noName = fm.horizontalAdvance(QStringLiteral("0–50 per view"));
    QCOMPARE(fittedColorBarLabel(d, s, fm, noName + 1), QStringLiteral("0–50 per view"));
    // Shorter still: elided, and never wider than the bar.
    const QString tiny = fittedColorBarLabel(d, s, fm, noName / 2);
    QVERIFY(tiny.endsWith(QChar(0x2026)));
    QVERIFY(fm.horizontalAdvance(tiny) <= noName / 2);
  }

  // On a log scale the bar keeps saying so as it shortens: the range and "log scale", then
  // "log", before the range alone; a log bar's ticks (0, 5,748, 33,056,078) do not say it.
  void shortLogColourBarKeepsTheScale() {
    HeatmapData d;
    d.valueLabel = QStringLiteral("pixels");
    d.valueMax = 33056078;
    d.integral = true;
    d.classes = 150;  // blank zeros from 100 classes
    d.rangeNote = QStringLiteral("0–33,056,078 per view");
    HeatmapStyle s;
    s.scale = ColourScale::Log;
    const QFontMetricsF fm(heatmapFont(s));
    const QString whole = QStringLiteral("pixels, 0–33,056,078 per view, log scale, white = 0");
    QCOMPARE(colorBarLabel(d, s), whole);
    const auto fitted = [&](const QString& room) {
      return fittedColorBarLabel(d, s, fm, fm.horizontalAdvance(room) + 1);
    };
    QCOMPARE(fitted(whole), whole);
    for (const QString& form :
         {QStringLiteral("0–33,056,078 per view, log scale, white = 0"),
          QStringLiteral("0–33,056,078 per view, log scale"),
          QStringLiteral("0–33,056,078 per view, log"), QStringLiteral("log scale")})
      QCOMPARE(fitted(form), form);
  }

  void colourBarLabelled() {
    const Evaluation e = paddedEvaluation(3, 3, 4);
    MatrixOptions o;
    o.normalization = Normalization::True;
    const auto figures = figureSet(e, o, HeatmapStyle{}, {});
    QCOMPARE(figures.back().first, QStringLiteral("difference"));
    QVERIFY(joined(textOf(figures[1].second)).contains(QStringLiteral("\nfraction of row, ")));
    QVERIFY(joined(textOf(figures.back().second)).contains(QStringLiteral("Δ fraction of row, ")));
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

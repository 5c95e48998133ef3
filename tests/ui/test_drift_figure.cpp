// The drift figure's data and drawing: each cell the evaluation's row sum minus the true
// count (computed here from the matrices), the most drifting classes first and named,
// pooled rows that keep a lone wrong class visible, at 10 and at 1000 classes.
#include <QtTest>
#include <cmath>
#include <vector>

#include "core/report/row_drift.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "ui/render/colormap.h"
#include "ui/render/drift_figure.h"
#include "ui/render/heatmap_painter.h"

using namespace shardlens;
using namespace shardlens::render;

namespace {

std::vector<Evaluation> epochsOf(Scenario s, int epochs) {
  std::vector<Evaluation> out;
  for (int e = 0; e < epochs; ++e) {
    s.sampler.epoch = e;
    out.push_back(simulate(s));
  }
  return out;
}

std::vector<const Evaluation*> pointers(const std::vector<Evaluation>& v) {
  std::vector<const Evaluation*> out;
  for (const Evaluation& e : v) out.push_back(&e);
  return out;
}

Scenario imagenetLimited() {
  Scenario s;
  s.name = "imagenet";
  s.dataset = "synthetic:classes=1000,per-class=20";
  s.sampler.world_size = 8;
  s.sampler.shuffle = true;
  s.loader.batch_size = 32;
  s.loader.limit = BatchLimit::parse("10");
  return s;
}

}  // namespace

class TestDriftFigure : public QObject {
  Q_OBJECT

 private slots:
  // What the columns share is said once under them: epochs numbered under "epoch", one
  // epoch's validations numbered under "validation (epoch 1)" (every other one was labelled
  // "epoch 1, validation 0"), anything else whole under "evaluation".
  void columnsSayWhatTheyShareOnce() {
    RowDrift epochs;
    epochs.columns = {"epoch 0", "epoch 1", "epoch 2"};
    DriftColumns c = driftColumns(epochs);
    QCOMPARE(c.labels, (std::vector<QString>{"0", "1", "2"}));
    QCOMPARE(c.axisTitle, QStringLiteral("epoch"));
    QCOMPARE(c.word, QStringLiteral("epoch"));
    RowDrift validations;
    validations.columns = {"epoch 1, validation 0", "epoch 1, validation 1",
                           "epoch 1, validation 2"};
    c = driftColumns(validations);
    QCOMPARE(c.labels, (std::vector<QString>{"0", "1", "2"}));
    QCOMPARE(c.axisTitle, QStringLiteral("validation (epoch 1)"));
    QCOMPARE(c.word, QStringLiteral("validation"));
    RowDrift mixed;
    mixed.columns = {"epoch 0, validation 1", "epoch 1, validation 0"};
    c = driftColumns(mixed);
    QCOMPARE(c.labels, (std::vector<QString>{"epoch 0, validation 1", "epoch 1, validation 0"}));
    QCOMPARE(c.axisTitle, QStringLiteral("evaluation"));
  }

  void cellsAreRowSumsMinusTrueCounts() {
    for (const Scenario& s : {load_preset("seed-lesson"), imagenetLimited()}) {
      const std::vector<Evaluation> runs = epochsOf(s, 3);
      const RowDrift d = row_drift(pointers(runs));
      QCOMPARE(d.classes, runs[0].classes());
      QCOMPARE(int(d.columns.size()), 3);
      double worst = 0;
      for (size_t k = 0; k < runs.size(); ++k) {
        QCOMPARE(d.columns[k], "epoch " + std::to_string(k));
        const auto rows = runs[k].synced->row_sums();
        for (int c = 0; c < d.classes; ++c) {
          const double want = rows[size_t(c)] - double(runs[k].meta.class_counts[size_t(c)]);
          QCOMPARE(d.at(c, k), want);
          worst = std::max(worst, std::abs(want));
        }
      }
      QCOMPARE(d.worst, worst);
      QVERIFY(worst > 0);  // both scenarios drift: a shuffled, batch-limited evaluation
      // The most drifting first: its spread and reach are the largest.
      const auto score = [&](int c) {
        double lo = d.at(c, 0), hi = lo;
        for (size_t k = 1; k < 3; ++k) lo = std::min(lo, d.at(c, k)), hi = std::max(hi, d.at(c, k));
        return hi - lo + std::max(std::abs(hi), std::abs(lo));
      };
      for (size_t i = 1; i < d.by_drift.size(); ++i)
        QVERIFY(score(d.by_drift[i - 1]) >= score(d.by_drift[i]));
    }
  }

  // One wrong class among 1000 keeps its colour when 1000 rows become 100 pixels.
  void pooledRowsKeepALoneWrongClass() {
    DriftFigure f;
    f.drift.classes = 1000;
    f.drift.columns = {"epoch 0", "epoch 1"};
    f.drift.off.assign(2000, 0.0);
    f.drift.off[size_t(537) * 2 + 1] = -3;
    f.drift.worst = 3;
    const QImage full = driftImage(f, 1000);
    const QImage pooled = driftImage(f, 100);
    QCOMPARE(pooled.size(), QSize(2, 100));
    const QRgb white = divergingColor(0), wrong = divergingColor(-1);
    QCOMPARE(full.pixel(1, 537), wrong);
    QCOMPARE(pooled.pixel(1, 53), wrong);
    int coloured = 0;
    for (int y = 0; y < 100; ++y)
      for (int x = 0; x < 2; ++x) coloured += pooled.pixel(x, y) != white;
    QCOMPARE(coloured, 1);
  }

  // Every class named when its row holds a line; else the most drifting, apart.
  void namedRows() {
    const std::vector<Evaluation> runs = epochsOf(imagenetLimited(), 2);
    DriftFigure f;
    f.drift = row_drift(pointers(runs));
    QCOMPARE(int(driftNamedRows(f, 14, 13).size()), 1000);
    const std::vector<int> named = driftNamedRows(f, 0.3, 13);
    QVERIFY(!named.empty() && int(named.size()) <= kDriftNamedClasses);
    QVERIFY(std::find(named.begin(), named.end(), f.drift.by_drift[0]) != named.end());
    for (size_t i = 1; i < named.size(); ++i) QVERIFY((named[i] - named[i - 1]) * 0.3 >= 13);
  }

  // Drawn at both scales, the cells fill the grid and the outline marks the shown epoch.
  void paintsAtBothScales() {
    for (const Scenario& s : {load_preset("seed-lesson"), imagenetLimited()}) {
      const std::vector<Evaluation> runs = epochsOf(s, 3);
      DriftFigure f;
      f.drift = row_drift(pointers(runs));
      f.highlight = 1;
      HeatmapStyle style;
      const QSizeF size = driftSizePoints(f, style);
      QImage image(size.toSize(), QImage::Format_RGB32);
      image.fill(Qt::white);
      QPainter p(&image);
      paintDrift(p, f, style, QRectF(QPointF(0, 0), size));
      p.end();
      const QRectF grid = driftGrid(f, style, QRectF(QPointF(0, 0), size));
      QVERIFY(grid.width() > 20 && grid.height() > 100);
      QVERIFY(QRectF(QPointF(0, 0), size).contains(grid));
      int coloured = 0;
      for (int y = int(grid.top()) + 2; y < int(grid.bottom()) - 2; ++y)
        for (int x = int(grid.left()) + 2; x < int(grid.right()) - 2; ++x)
          coloured += (image.pixel(x, y) & 0xffffff) != 0xffffff;
      QVERIFY(coloured > 0);
    }
  }

  // In a narrow Charts dock the title breaks between words instead of being cut, and the
  // rows' axis is named upright at the left, whole.
  void narrowFigureKeepsItsTitleAndNamesTheRows() {
    const std::vector<Evaluation> runs = epochsOf(load_preset("seed-lesson"), 3);
    DriftFigure f;
    f.drift = row_drift(pointers(runs));
    const HeatmapStyle style;
    QFont titleFont = heatmapFont(style, true);
    titleFont.setPixelSize(style.fontPixels + 2);
    const QFontMetricsF titleMetrics(titleFont);
    const QString title =
        QStringLiteral("Row sum − true count, by class and epoch (0: the row is right)");
    for (const double width : {240.0, 320.0, 480.0, 900.0}) {
      const QRectF bounds(0, 0, width, 300);
      const DriftParts parts = driftLayout(f, style, bounds);
      const QStringList lines = driftTitleLines(f, style, parts.title.width());
      QCOMPARE(lines.join(QLatin1Char(' ')), title);
      for (const QString& line : lines)
        QVERIFY2(titleMetrics.horizontalAdvance(line) <= parts.title.width(), qPrintable(line));
      QVERIFY(parts.title.height() >= lines.size() * titleMetrics.height());
      QVERIFY(parts.grid.top() > parts.title.bottom());
      // The upright axis title: inside the figure, left of the names, as tall as its words.
      QVERIFY(bounds.contains(parts.yTitle));
      QVERIFY(parts.yTitle.right() <= parts.names.left());
      QVERIFY(parts.yTitle.height() >=
              QFontMetricsF(heatmapFont(style)).horizontalAdvance(kDriftYTitle));
      QVERIFY(parts.yTitle.width() >= QFontMetricsF(heatmapFont(style)).height());
    }
    QCOMPARE(driftTitleLines(f, style, 240).size() > 1, true);
    QCOMPARE(driftTitleLines(f, style, 900).size(), 1);
    // Something is drawn where the axis title goes.
    QImage image(320, 300, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter p(&image);
    paintDrift(p, f, style, QRectF(0, 0, 320, 300));
    p.end();
    const QRect yTitle = driftLayout(f, style, QRectF(0, 0, 320, 300)).yTitle.toRect();
    int ink = 0;
    for (int y = yTitle.top(); y <= yTitle.bottom(); ++y)
      for (int x = yTitle.left(); x <= yTitle.right(); ++x) ink += qGray(image.pixel(x, y)) < 128;
    QVERIFY(ink > 20);
  }
};

QTEST_MAIN(TestDriftFigure)
#include "test_drift_figure.moc"

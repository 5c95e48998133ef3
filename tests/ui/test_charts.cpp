// The row-sum chart shows a difference of 1: where every difference is a sliver of the bars'
// height, its value axis starts from the data (and its title says where), else from 0.
#include <QChart>
#include <QChartView>
#include <QGraphicsTextItem>
#include <QValueAxis>
#include <QtTest>
#include <cmath>

#include "core/sim/engine.h"
#include "ui/views/charts.h"

using namespace shardlens;
using namespace shardlens::ui;

namespace {

// 10 classes of 50 on `world` ranks in batches of 10, every prediction right.
ResultPtr resultOf(int world, const std::string& limit = {}) {
  auto labels = std::make_shared<Labels>(synthetic_counts(std::vector<int64_t>(10, 50)));
  const std::vector<int32_t> predictions(labels->targets.begin(), labels->targets.end());
  Scenario s;
  s.name = "charts";
  s.sampler.world_size = world;
  s.loader.batch_size = 10;
  if (!limit.empty()) s.loader.limit = BatchLimit::parse(limit);
  auto r = std::make_shared<EvaluationResult>();
  r->eval = evaluate(s, make_inputs(labels, predictions));
  return r;
}

QValueAxis* valueAxis(QChartView* view) {
  return qobject_cast<QValueAxis*>(view->chart()->axes(Qt::Vertical).front());
}

}  // namespace

class TestCharts : public QObject {
  Q_OBJECT

 private slots:
  // 500 samples on 3 ranks: padded to 501, one row sums to 51 against 50. On an axis from
  // 0 that is 2% of a bar; from the data it is a step the eye sees.
  void differenceOfOneIsVisible() {
    const ResultPtr r = resultOf(3);
    const auto& rows = r->eval.row_check;
    int offByOne = 0;
    for (size_t c = 0; c < rows.truth.size(); ++c)
      offByOne += std::abs(rows.observed[c] - double(rows.truth[c])) == 1 ? 1 : 0;
    QCOMPARE(offByOne, 1);
    ChartsPanel panel;
    panel.resize(500, 500);
    panel.setResult(r);
    QValueAxis* y = valueAxis(panel.classChart());
    QVERIFY(y);
    QVERIFY2(y->min() > 0 && y->min() < 50, qPrintable(QString::number(y->min())));
    QVERIFY2(1.0 / (y->max() - y->min()) >= 0.05,
             qPrintable(QStringLiteral("%1..%2").arg(y->min()).arg(y->max())));
    QVERIFY(panel.classChart()->chart()->title().contains(
        QStringLiteral("axis from %1").arg(y->min())));
  }

  // A batch limit: rows of 20 against 50, a difference as large as the bars: from 0.
  void largeDifferencesFromZero() {
    ChartsPanel panel;
    panel.resize(500, 500);
    panel.setResult(resultOf(4, "5"));
    QCOMPARE(valueAxis(panel.classChart())->min(), 0.0);
    QVERIFY(!panel.classChart()->chart()->title().contains(QStringLiteral("axis from")));
  }

  // The Charts dock at its narrowest (280 px, a 1280 x 800 screen): no axis label is cut to
  // "ne…"; the category labels turn upright where they do not fit across. Shown first in a
  // wide dock, as the window lays it out while the tab is hidden, then narrowed.
  void categoryLabelsWholeInANarrowDock() {
    ChartsPanel panel;
    panel.resize(600, 700);
    panel.setResult(resultOf(3));  // padding on every rank: three legend entries
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    for (const int width : {280, 330, 600}) {
      panel.resize(width, 700);
      QTest::qWait(50);
      for (QChartView* view : panel.findChildren<QChartView*>()) {
        if (!view->isVisible()) continue;
        for (QGraphicsItem* item : view->scene()->items())
          if (auto* text = dynamic_cast<QGraphicsTextItem*>(item))
            QVERIFY2(!text->toPlainText().endsWith(QStringLiteral("...")) &&
                         !text->toPlainText().endsWith(QChar(0x2026)),
                     qPrintable(QStringLiteral("%1 at %2 px").arg(text->toPlainText()).arg(width)));
      }
    }
  }
};

QTEST_MAIN(TestCharts)

#include "test_charts.moc"

// The window at the sizes of small laptop screens (1280 x 800, 1366 x 768) and of larger
// ones (1600 x 1000, 1920 x 1080), at 10 and at 1000 classes: every heatmap keeps a readable
// grid with its axis titles whole, every rank's view can be scrolled to and is not cut at the
// edge, the Metrics dock shows its headers and numbers whole and the shard strip its header.
// The synced view uses the height beside the expected and difference views rather than
// leaving a blank band below it, those two stand in one row where they fit, and the
// right-hand dock tabs read their titles whole. Two
// lessons join the synthetic cases: counter-precision's five-digit counts and VOC's
// pixel counts and task metrics, whose wide matrices stack the views.
// Each case grabs the window (a screenshot, written to $SHARDLENS_TEST_SHOTS when it is set).
#include <QDir>
#include <QDockWidget>
#include <QHeaderView>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStyle>
#include <QTabBar>
#include <QtTest>
#include <algorithm>

#include "core/sim/lessons.h"

#include "tests/ui/ui_test_util.h"
#include "ui/main_window.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/metrics_panel.h"
#include "ui/render/heatmap_painter.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/shard_strip.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::part;

namespace {

// A grid this wide still shows 10 classes as cells of 10 px; below it a view reads as a
// sliver (the 30 px views at 1280 x 800).
constexpr double kReadableGrid = 100;
// The small multiples of the ranks: 7 px a cell at 10 classes.
constexpr double kReadableRankGrid = 70;

Scenario tenClasses() {
  Scenario s = test::syntheticScenario("ten", 10, 50, 4, 10);
  s.sampler.shuffle = true;
  s.loader.limit = BatchLimit::parse("10");
  return s;
}

Scenario thousandClasses() {
  Scenario s = test::syntheticScenario("thousand", 1000, 20, 8, 32);
  s.sampler.shuffle = true;
  s.loader.limit = BatchLimit::parse("10");
  return s;
}

// "10" and "1000": synthetic scenarios; else a lesson of resources/lessons.
Scenario scenarioNamed(const QString& name) {
  if (name == QLatin1String("10")) return tenClasses();
  if (name == QLatin1String("1000")) return thousandClasses();
  return load_preset(SHARDLENS_LESSON_DIR "/" + name.toStdString() + ".json");
}

QString where(const QString& what, const QRectF& r) {
  return QStringLiteral("%1 at %2,%3 %4x%5")
      .arg(what)
      .arg(r.x())
      .arg(r.y())
      .arg(r.width())
      .arg(r.height());
}

}  // namespace

class TestScreenSizes : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void layoutHolds_data() {
    QTest::addColumn<QSize>("size");
    QTest::addColumn<QString>("scenario");
    for (const QSize size :
         {QSize(1280, 800), QSize(1366, 768), QSize(1600, 1000), QSize(1920, 1080)})
      for (const char* scenario :
           {"10", "1000", "counter-precision", "voc-padding-miou", "logged-accuracy-mean"})
        QTest::addRow("%dx%d, %s", size.width(), size.height(), scenario) << size << scenario;
  }

  void layoutHolds() {
    QFETCH(QSize, size);
    QFETCH(QString, scenario);
    const bool thousand = scenario == QLatin1String("1000");
    const Scenario shownScenario = scenarioNamed(scenario);
    MainWindow w;
    w.setErrorDialogs(false);
    w.resize(size);
    w.show();
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.setScenario(shownScenario);
    QVERIFY(shown.wait(60000) || shown.count() > 0);
    QTest::qWait(100);         // the docks make room after the layout (a queued step)
    QCOMPARE(w.size(), size);  // the window's minimum fits the screen

    const QImage shot = w.grab().toImage();
    QCOMPARE(shot.size(), size);
    if (const QString dir = qEnvironmentVariable("SHARDLENS_TEST_SHOTS"); !dir.isEmpty()) {
      QDir().mkpath(dir);
      shot.save(QDir(dir).filePath(QStringLiteral("window-%1x%2-%3.png")
                                       .arg(size.width())
                                       .arg(size.height())
                                       .arg(scenario)));
    }

    auto* matrices = part<MatrixPanel>(w);
    auto* scroll = qobject_cast<QScrollArea*>(matrices->parentWidget()->parentWidget());
    QVERIFY(scroll);
    // Nothing of the matrices lies past the right edge: they scroll down, never sideways.
    QVERIFY2(matrices->width() <= scroll->viewport()->width(),
             qPrintable(QStringLiteral("panel %1 px in a viewport of %2 px")
                            .arg(matrices->width())
                            .arg(scroll->viewport()->width())));

    // The three large views: a readable grid, "Predicted" and "True" whole beside it.
    const QFontMetricsF fm(render::heatmapFont(matrices->syncedView()->style()));
    for (HeatmapView* v :
         {matrices->syncedView(), matrices->expectedView(), matrices->differenceView()}) {
      const render::HeatmapLayout& l = v->layoutRects();
      const QString name = v->objectName();
      QVERIFY2(l.grid.width() >= kReadableGrid && l.grid.height() >= kReadableGrid,
               qPrintable(where(name + QStringLiteral(" grid"), l.grid)));
      QVERIFY(!v->data().xLabel.isEmpty() && !v->data().yLabel.isEmpty());
      QVERIFY2(l.xTitle.width() >= fm.horizontalAdvance(v->data().xLabel),
               qPrintable(where(name + QStringLiteral(" x title"), l.xTitle)));
      QVERIFY2(l.yTitle.height() >= fm.horizontalAdvance(v->data().yLabel),
               qPrintable(where(name + QStringLiteral(" y title"), l.yTitle)));
      for (const QRectF& piece : {l.xTitle, l.yTitle, l.grid})
        QVERIFY2(QRectF(v->rect()).contains(piece), qPrintable(where(name, piece)));
      QVERIFY2(v->geometry().right() < matrices->width(), qPrintable(name));
    }

    // Side by side, the synced view reaches down beside the expected and difference views
    // (no blank band below it over a quarter of their height), unless it already stretched
    // upright as far as it may (its grid twice as tall as wide).
    HeatmapView* synced = matrices->syncedView();
    const QRect side =
        matrices->expectedView()->geometry().united(matrices->differenceView()->geometry());
    if (side.left() > synced->geometry().right()) {
      const QRectF grid = synced->layoutRects().grid;
      const int blank = side.bottom() - synced->geometry().bottom();
      QVERIFY2(blank <= side.height() / 4 || grid.height() >= 1.9 * grid.width(),
               qPrintable(QStringLiteral("%1 px blank below the synced view (%2), beside %3 px")
                              .arg(blank)
                              .arg(where(QStringLiteral("grid"), grid))
                              .arg(side.height())));
    }

    // Stretched upright, the synced view is short of width: the right-hand docks have given
    // theirs, down to where their tabs and the Metrics table still read whole.
    if (side.left() > synced->geometry().right() &&
        synced->layoutRects().grid.height() > 1.1 * synced->layoutRects().grid.width()) {
      auto* metricsPanel = part<MetricsPanel>(w);
      int readable = 280;
      for (const QTabBar* bar : w.findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly))
        if (bar->isVisible()) readable = std::max(readable, bar->sizeHint().width());
      readable =
          std::max(readable, metricsPanel->readableWidth() + metricsPanel->parentWidget()->width() -
                                 metricsPanel->width());
      const auto* dock = w.findChild<QDockWidget*>(QStringLiteral("diagnosisDock"));
      QVERIFY2(dock->width() <= readable + 2,
               qPrintable(QStringLiteral("right-hand docks %1 px, readable at %2")
                              .arg(dock->width())
                              .arg(readable)));
    }

    // Expected and difference that fit side by side at their readable widths stand in one
    // row (beside or below the synced view), not one above the other past the window's
    // bottom: the difference view starts in sight, unscrolled.
    const int pairWidth = 2 * std::max(matrices->expectedView()->minimumSizeHint().width(),
                                       matrices->differenceView()->minimumSizeHint().width()) +
                          6 + 8;
    const bool besideSynced = side.left() > synced->geometry().right();
    if (!besideSynced && scroll->viewport()->width() >= pairWidth) {
      QCOMPARE(matrices->expectedView()->geometry().top(),
               matrices->differenceView()->geometry().top());
      QVERIFY2(matrices->differenceView()->geometry().top() < scroll->viewport()->height(),
               qPrintable(where(QStringLiteral("difference view"),
                                matrices->differenceView()->geometry())));
    }

    // Every rank's view: scrolled to, it is shown whole.
    const auto& ranks = matrices->rankViews();
    QCOMPARE(int(ranks.size()), int(shownScenario.sampler.world_size));
    for (HeatmapView* v : ranks) {
      scroll->ensureWidgetVisible(v, 0, 0);
      QCoreApplication::processEvents();
      QVERIFY2(v->layoutRects().grid.width() >= kReadableRankGrid, qPrintable(v->objectName()));
      const QRect onScreen = QRect(v->mapTo(scroll->viewport(), QPoint(0, 0)), v->size());
      QVERIFY2(scroll->viewport()->rect().contains(onScreen),
               qPrintable(where(v->objectName(), onScreen)));
    }

    // The Metrics dock: each header and each number whole in its column.
    auto* metrics = part<MetricsPanel>(w);
    QVERIFY(metrics->isVisible());
    const QHeaderView* header = metrics->horizontalHeader();
    const QFontMetrics headerFm(header->font());
    const QFontMetrics cellFm(metrics->font());
    QVERIFY(metrics->model()->rowCount() > 0);
    // Nothing past the right edge: every column is whole in the dock, none scrolled to.
    QCOMPARE(metrics->horizontalScrollBar()->maximum(), 0);
    for (int c = MetricsModel::Metric; c < MetricsModel::ColumnCount; ++c) {
      if (metrics->isColumnHidden(c)) continue;
      const QString title = metrics->model()->headerData(c, Qt::Horizontal).toString();
      // Each line of a header whole ("Per-rank" above "mean"), every line in the header.
      const QStringList titleLines = title.split(QLatin1Char('\n'));
      for (const QString& line : titleLines)
        QVERIFY2(header->sectionSize(c) >= headerFm.horizontalAdvance(line) + 8,
                 qPrintable(QStringLiteral("%1: %2 px").arg(line).arg(header->sectionSize(c))));
      QVERIFY2(header->height() >= titleLines.size() * headerFm.height(), qPrintable(title));
      for (int r = 0; r < metrics->model()->rowCount(); ++r) {
        const QModelIndex index = metrics->model()->index(r, c);
        const QString text = index.data().toString();
        // The cell less its grid line, and the item's text margins.
        const QRect cell = metrics->visualRect(index);
        const int room = cell.width() - 6;
        const QString what = QStringLiteral("%1 in %2 (%3 px)").arg(text, title).arg(room);
        // A name may break onto more lines (wrapped rows), each word whole, all in the row;
        // never before its class number ("precision 770" on one line).
        bool numbered = false;
        text.section(QLatin1Char(' '), -1).toInt(&numbered);
        if (c == MetricsModel::Metric && metrics->wordWrap() && !numbered) {
          const QRect lines = cellFm.boundingRect(QRect(0, 0, room, 1000), Qt::TextWordWrap, text);
          QVERIFY2(lines.width() <= room, qPrintable(what));
          QVERIFY2(lines.height() <= cell.height(), qPrintable(what));
          continue;
        }
        QVERIFY2(room >= cellFm.horizontalAdvance(text), qPrintable(what));
      }
    }

    // The right-hand dock tabs: each its dock's title, whole (as wide as the title and the
    // style's tab padding), none past the bar's end.
    int bars = 0;
    for (const QTabBar* bar : w.findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly)) {
      if (!bar->isVisible()) continue;
      ++bars;
      const int padding = bar->style()->pixelMetric(QStyle::PM_TabBarTabHSpace, nullptr, bar);
      for (int i = 0; i < bar->count(); ++i) {
        const QString title = bar->tabText(i);
        const auto docks = w.findChildren<QDockWidget*>();
        QVERIFY2(std::any_of(docks.begin(), docks.end(),
                             [&title](const QDockWidget* d) { return d->windowTitle() == title; }),
                 qPrintable(title));
        const int needed = bar->fontMetrics().horizontalAdvance(title) + padding;
        QVERIFY2(bar->tabRect(i).width() >= needed,
                 qPrintable(QStringLiteral("tab \"%1\" %2 px, its title needs %3")
                                .arg(title)
                                .arg(bar->tabRect(i).width())
                                .arg(needed)));
        QVERIFY2(bar->tabRect(i).right() <= bar->rect().right(), qPrintable(title));
      }
    }
    QCOMPARE(bars, 1);  // the right-hand docks' tabs

    // The shard strip's header: every line within the strip.
    auto* strip = part<ShardStrip>(w);
    const QStringList lines = strip->headerLines(strip->width());
    QCOMPARE(lines.join(QStringLiteral("   ")), strip->headerText());
    for (const QString& line : lines)
      QVERIFY2(strip->fontMetrics().horizontalAdvance(line) <= strip->width() - 8,
               qPrintable(line));
    QVERIFY(strip->lanesRect().top() >= lines.size() * strip->fontMetrics().height());
  }
};

QTEST_MAIN(TestScreenSizes)
#include "test_screen_sizes.moc"

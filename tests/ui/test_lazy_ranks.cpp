// The rank views at 1000 classes and 32 ranks in the window (render::deferRanks): after a
// setting change only the rank views on screen have their maps; one scrolled to gets its map
// then, equal to the map built from scratch in the ranks' one colour range, and a view
// scrolled away keeps what it had.
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QtTest>
#include <algorithm>

#include "core/sim/engine.h"
#include "tests/ui/ui_test_util.h"
#include "ui/main_window.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/scenario_panel.h"
#include "ui/render/heatmap_source.h"

using namespace shardlens;
using namespace shardlens::ui;

class TestLazyRanks : public QObject {
  Q_OBJECT
 private slots:
  void offScreenRankViewsGetTheirMapsWhenScrolledTo() {
    MainWindow w;
    w.setErrorDialogs(false);
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy shown(&w, &MainWindow::resultShown);
    Scenario s = test::syntheticScenario("lazy-ranks", 1000, 20, 32, 32);
    s.sampler.shuffle = true;
    w.setScenario(s);
    QVERIFY(shown.wait(120000));
    auto* matrices = test::part<MatrixPanel>(w);
    // The views on screen are known once the window is laid out, after the docks settle
    // around the first result (a fixed wait raced them); the next result defers the others.
    QTRY_VERIFY_WITH_TIMEOUT(matrices->viewRequest().shownRanks &&
                                 !matrices->viewRequest().shownRanks->empty() &&
                                 matrices->viewRequest().shownRanks->size() < 32,
                             10000);
    shown.clear();
    test::part<ScenarioPanel>(w)->stepEpoch(1);
    QVERIFY(shown.wait(120000));
    const auto& ranks = matrices->rankViews();
    QCOMPARE(int(ranks.size()), 32);
    const auto onScreen = [](HeatmapView* v) { return !v->visibleRegion().isEmpty(); };
    const auto lastOff =
        std::find_if(ranks.rbegin(), ranks.rend(), [&](HeatmapView* v) { return !onScreen(v); });
    QVERIFY2(lastOff != ranks.rend(), "every rank view on screen: nothing to defer");
    HeatmapView* later = *lastOff;
    const int rank = int(ranks.rend() - lastOff) - 1;
    QCOMPARE(later->data().classes, 0);  // waiting, said so
    for (HeatmapView* v : ranks)
      if (onScreen(v)) QCOMPARE(v->data().classes, 1000);

    QScrollArea* scroll = nullptr;
    for (QWidget* p = matrices->parentWidget(); p && !scroll; p = p->parentWidget())
      scroll = qobject_cast<QScrollArea*>(p);
    QVERIFY(scroll);
    scroll->ensureWidgetVisible(later);
    QTRY_VERIFY_WITH_TIMEOUT(onScreen(later) && later->data().classes == 1000, 60000);
    const Evaluation& e = matrices->result()->eval;
    const auto fresh = render::rankHeatmaps(e, matrices->viewRequest().matrix);
    QCOMPARE(later->data().denseValues(), fresh[size_t(rank)].denseValues());
    QCOMPARE(later->data().valueMax, fresh[size_t(rank)].valueMax);
    QCOMPARE(later->data().title, fresh[size_t(rank)].title);
    // Scrolled back: the map stays.
    scroll->verticalScrollBar()->setValue(0);
    QTest::qWait(50);
    QCOMPARE(later->data().classes, 1000);
  }
};

QTEST_MAIN(TestLazyRanks)
#include "test_lazy_ranks.moc"

// The main window end to end, offscreen: lessons load, a scenario-panel control changes the
// rendered matrices, row-sum mismatches are highlighted for the padding lesson and absent
// for a correct scenario, stale jobs are dropped and cancel works.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QtTest>

#include "tests/ui/ui_test_util.h"
#include "ui/main_window.h"
#include "ui/models/idx_images.h"
#include "ui/models/lesson_model.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/sample_panel.h"
#include "ui/panels/scenario_panel.h"
#include "ui/render/heatmap_painter.h"
#include "ui/views/heatmap_view.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::mismatchPixels;
using shardlens::ui::test::part;
using shardlens::ui::test::showQuietly;

namespace {

bool waitResult(MainWindow& /*w*/, QSignalSpy& spy) {
  return spy.wait(30000) || spy.count() > 0;
}

Scenario correctScenario() {
  Scenario s;
  s.name = "correct";
  s.dataset = "synthetic:classes=10,per-class=40";  // 400 samples, a multiple of 4 ranks
  s.sampler.world_size = 4;
  s.loader.batch_size = 10;
  return s;
}

// The window shown (quietly) with `s` evaluated and on screen.
bool showScenario(MainWindow& w, const Scenario& s) {
  showQuietly(w);
  QSignalSpy shown(&w, &MainWindow::resultShown);
  w.setScenario(s);
  return waitResult(w, shown);
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void paddingLessonHighlightsMismatch() {
    MainWindow w;
    showQuietly(w);
    QSignalSpy shown(&w, &MainWindow::resultShown);
    QVERIFY(w.loadLesson(QStringLiteral("padding-duplicates")));
    QVERIFY(waitResult(w, shown));
    QVERIFY(!w.result()->eval.diagnosis.correct);
    HeatmapView* synced = part<MatrixPanel>(w)->syncedView();
    QVERIFY(synced->data().mismatchCount() > 0);
    QVERIFY(mismatchPixels(synced) > 0);
    // Not colour alone: the verdict and the title say it in words.
    QVERIFY(
        w.findChild<QLabel*>(QStringLiteral("verdict"))->text().contains(QStringLiteral("wrong")));
    QCOMPARE(mismatchPixels(part<MatrixPanel>(w)->expectedView()), 0);
    QVERIFY(w.lastError().isEmpty());
  }

  void correctScenarioHasNoMismatch() {
    MainWindow w;
    QVERIFY(showScenario(w, correctScenario()));
    QVERIFY(w.result()->eval.diagnosis.correct);
    QCOMPARE(part<MatrixPanel>(w)->syncedView()->data().mismatchCount(), 0);
    QCOMPARE(mismatchPixels(part<MatrixPanel>(w)->syncedView()), 0);
    QCOMPARE(mismatchPixels(part<MatrixPanel>(w)->differenceView()), 0);
    QVERIFY(w.findChild<QLabel*>(QStringLiteral("verdict"))
                ->text()
                .contains(QStringLiteral("correct")));
  }

  void panelControlChangesMatrices() {
    MainWindow w;
    w.setErrorDialogs(false);
    w.show();
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.setScenario(correctScenario());
    QVERIFY(waitResult(w, shown));
    const auto before = part<MatrixPanel>(w)->rankViews().front()->data().denseValues();
    QCOMPARE(int(part<MatrixPanel>(w)->rankViews().size()), 4);

    auto* world = part<ScenarioPanel>(w)->findChild<QSpinBox*>(QStringLiteral("worldSize"));
    QVERIFY(world);
    shown.clear();
    world->setValue(3);  // 400 on 3 ranks: padding to 402
    QVERIFY(waitResult(w, shown));
    QCOMPARE(w.scenario().sampler.world_size, 3);
    QCOMPARE(int(part<MatrixPanel>(w)->rankViews().size()), 3);
    QVERIFY(part<MatrixPanel>(w)->rankViews().front()->data().denseValues() != before);
    QVERIFY(part<MatrixPanel>(w)->syncedView()->data().mismatchCount() > 0);

    auto* shuffle = part<ScenarioPanel>(w)->findChild<QCheckBox*>(QStringLiteral("shuffle"));
    const auto unshuffled = part<MatrixPanel>(w)->rankViews().front()->data().denseValues();
    shown.clear();
    shuffle->setChecked(true);
    QVERIFY(waitResult(w, shown));
    QVERIFY(w.scenario().sampler.shuffle);
    QVERIFY(part<MatrixPanel>(w)->rankViews().front()->data().denseValues() != unshuffled);
  }

  void clickListsSamples() {
    MainWindow w;
    QVERIFY(showScenario(w, correctScenario()));
    HeatmapView* v = part<MatrixPanel>(w)->syncedView();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QPoint centre = v->viewport().cellRect({0, 0}).center().toPoint();
    QTest::mouseClick(v, Qt::LeftButton, {}, centre);
    const auto* model = part<SamplePanel>(w)->model();
    QCOMPARE(model->rowCount(), int(w.result()->eval.synced->at(0, 0)));
    for (int r = 0; r < model->rowCount(); ++r) {
      QCOMPARE(model->sample(r)->target, 0);
      QCOMPARE(model->sample(r)->prediction, 0);
    }
  }

  void toolbarOptionsRepaintViews() {
    MainWindow w;
    QVERIFY(showScenario(w, correctScenario()));
    HeatmapView* v = part<MatrixPanel>(w)->syncedView();
    const QImage viridis = v->grab().toImage();
    ViewOptions o = w.viewOptions();
    o.style.colormap = render::Colormap::Grey;
    o.matrix.normalization = Normalization::True;
    w.setViewOptions(o);
    QCOMPARE(v->style().colormap, render::Colormap::Grey);
    QTRY_VERIFY(!v->data().integral);  // normalized values, prepared in the background
    QVERIFY(v->grab().toImage() != viridis);
    // Row sums stay counts whatever the normalization.
    QCOMPARE(v->data().rowObserved[0], w.result()->eval.synced->row_sums()[0]);
  }

  void wheelZoomsAroundTheCursor() {
    MainWindow w;
    QVERIFY(showScenario(w, correctScenario()));
    HeatmapView* v = part<MatrixPanel>(w)->syncedView();
    const QPointF at = v->viewport().cellRect({7, 2}).center();
    QWheelEvent wheel(at, v->mapToGlobal(at), {}, {0, 240}, Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(v, &wheel);
    QVERIFY(v->viewport().zoom > 1.0);
    QCOMPARE(v->viewport().cellAt(at), std::optional<render::Cell>(render::Cell{7, 2}));
    QTest::mouseDClick(v, Qt::LeftButton, {}, at.toPoint());
    QCOMPARE(v->viewport().zoom, 1.0);
  }

  // The keyboard reaches what the mouse does: a cell cursor that pans into view at a zoom,
  // Enter lists the cell's samples, Esc drops the cursor without cancelling anything.
  void keyboardNavigatesCells() {
    MainWindow w;
    QVERIFY(showScenario(w, correctScenario()));
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    HeatmapView* v = part<MatrixPanel>(w)->syncedView();
    v->setFocus();
    const auto at = [v] { return v->currentCell().value_or(render::Cell{-1, -1}); };
    QTest::keyClick(v, Qt::Key_Down);  // first key: the cursor appears on the top-left cell
    QCOMPARE(at(), (render::Cell{0, 0}));
    QTest::keyClick(v, Qt::Key_Right);
    QTest::keyClick(v, Qt::Key_Down);
    QTest::keyClick(v, Qt::Key_Down);
    QCOMPARE(at(), (render::Cell{2, 1}));
    QTest::keyClick(v, Qt::Key_End);
    QCOMPARE(at(), (render::Cell{2, 9}));
    QTest::keyClick(v, Qt::Key_Home, Qt::ControlModifier);
    QCOMPARE(at(), (render::Cell{0, 0}));
    // Zoomed in, moving to the far corner pans it into view.
    for (int i = 0; i < 4; ++i) QTest::keyClick(v, Qt::Key_Plus);
    QVERIFY(v->viewport().zoom > 1.0);
    QCOMPARE(v->viewport().visible().firstRow, 0);
    QTest::keyClick(v, Qt::Key_End, Qt::ControlModifier);
    QCOMPARE(at(), (render::Cell{9, 9}));
    QCOMPARE(v->viewport().visible().lastRow, 9);
    QCOMPARE(v->viewport().visible().lastCol, 9);
    QTest::keyClick(v, Qt::Key_0);
    QCOMPARE(v->viewport().zoom, 1.0);
    // Enter lists the samples of the cursor's cell, as a click does.
    QTest::keyClick(v, Qt::Key_Return);
    const auto* model = part<SamplePanel>(w)->model();
    QCOMPARE(model->rowCount(), int(w.result()->eval.synced->at(9, 9)));
    QVERIFY(model->rowCount() > 0);
    QCOMPARE(model->sample(0)->target, 9);
    QTest::keyClick(v, Qt::Key_Escape);
    QVERIFY(!v->currentCell());
  }

  void idxImagesForFashionMnist() {
    const QString path = idxImagesPath("fashion-mnist:test");
    if (path.isEmpty()) QSKIP("Debian's dataset-fashion-mnist is not installed");
    IdxImageCache cache;
    const QImage img = cache.image(path, 0);
    QCOMPARE(img.size(), QSize(28, 28));
    QVERIFY(idxImagesPath("synthetic:classes=10,per-class=5").isEmpty());
  }

  void staleResultsAreDropped() {
    EvaluationRunner runner;
    QSignalSpy finished(&runner, &EvaluationRunner::finished);
    Scenario a = correctScenario();
    Scenario b = a;
    b.sampler.world_size = 3;
    runner.start(a);
    const quint64 last = runner.start(b);
    runner.waitIdle();
    QCoreApplication::processEvents();
    QCOMPARE(finished.count(), 1);
    const auto result = finished.first().first().value<ResultPtr>();
    QCOMPARE(result->jobId, last);
    QCOMPARE(int(result->eval.per_rank.size()), 3);
  }

  void cancelStopsAJob() {
    EvaluationRunner runner;
    QSignalSpy cancelled(&runner, &EvaluationRunner::cancelled);
    QSignalSpy finished(&runner, &EvaluationRunner::finished);
    Scenario s = correctScenario();
    s.dataset = "synthetic:classes=10,per-class=200000";  // cancel is seen at the first step
    s.sampler.shuffle = true;
    runner.start(s);
    runner.cancel();
    runner.waitIdle();
    QCoreApplication::processEvents();
    QCOMPARE(cancelled.count() + finished.count(), 1);
    QCOMPARE(cancelled.count(), 1);
  }

  void badSettingShowsError() {
    MainWindow w;
    w.setErrorDialogs(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    Scenario s = correctScenario();
    s.dataset = "npy:/nonexistent/labels.npy";
    w.setScenario(s);
    QVERIFY(errors.wait(30000) || errors.count() > 0);
    QVERIFY(w.lastError().contains(QStringLiteral("/nonexistent/labels.npy")));
    QVERIFY(!w.openScenario(QStringLiteral("/nonexistent/scenario.json")));
  }

  // A bad dataset typed into the panel is named by its field, not by the CLI's flag, and
  // says what n=N lacks.
  void badDatasetNamesTheField() {
    MainWindow w;
    w.setErrorDialogs(false);
    auto* dataset = part<ScenarioPanel>(w)->findChild<QComboBox*>(QStringLiteral("dataset"));
    QVERIFY(dataset);
    dataset->setCurrentText(QStringLiteral("synthetic:classes=10,n=100"));
    QVERIFY(QMetaObject::invokeMethod(dataset->lineEdit(), "editingFinished"));
    QTRY_VERIFY(!w.lastError().isEmpty());
    QVERIFY2(w.lastError().startsWith(QStringLiteral("Dataset: ")), qPrintable(w.lastError()));
    QVERIFY2(w.lastError().contains(QStringLiteral("zipf=S")), qPrintable(w.lastError()));
    QVERIFY2(!w.lastError().contains(QStringLiteral("--")), qPrintable(w.lastError()));
  }

  void saveAndReopenScenario() {
    QTemporaryDir dir;
    MainWindow w;
    w.setErrorDialogs(false);
    QSignalSpy shown(&w, &MainWindow::resultShown);
    Scenario s = correctScenario();
    s.sampler.seed = 7;
    s.sync = SyncStrategy::Double;
    w.setScenario(s);
    QVERIFY(waitResult(w, shown));
    const QString path = dir.filePath(QStringLiteral("s.json"));
    QVERIFY(w.saveScenario(path));
    MainWindow other;
    other.setErrorDialogs(false);
    QVERIFY(other.openScenario(path));
    QCOMPARE(other.scenario().sampler.seed, 7);
    QCOMPARE(other.scenario().sync, SyncStrategy::Double);
    part<EvaluationRunner>(other)->waitIdle();
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"

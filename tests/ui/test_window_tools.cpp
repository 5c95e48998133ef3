// The window's tools around the views: Edit > Copy as tab-separated text, a fixed colour
// range, the export file name, the shard strip (capped height, every duplicate drawn), a
// lesson whose settings were edited, and chart labels that are never cut.
#include <QApplication>
#include <QBarCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QClipboard>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "core/sim/lessons.h"
#include "tests/ui/ui_test_util.h"
#include "ui/controllers/export_controller.h"
#include "ui/main_window.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/scenario_panel.h"
#include "ui/views/charts.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/shard_strip.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::part;
using shardlens::ui::test::showQuietly;

namespace {

bool show(MainWindow& w, const Scenario& s) {
  showQuietly(w);
  QSignalSpy shown(&w, &MainWindow::resultShown);
  w.setScenario(s);
  return shown.wait(30000) || shown.count() > 0;
}

bool showLesson(MainWindow& w, const QString& name) {
  showQuietly(w);
  QSignalSpy shown(&w, &MainWindow::resultShown);
  return w.loadLesson(name) && (shown.wait(30000) || shown.count() > 0);
}

Scenario padded(int perClass, int world) {
  return test::syntheticScenario("padded", 9, perClass, world, 16);
}

}  // namespace

class TestWindowTools : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  // Ctrl+C: the focused matrix pastes into a spreadsheet, names and counts in place.
  void copyGivesTsvWithClassNames() {
    MainWindow w;
    QVERIFY(showLesson(w, QStringLiteral("padding-duplicates")));
    HeatmapView* synced = part<MatrixPanel>(w)->syncedView();
    synced->setFocus();
    QApplication::clipboard()->clear();
    w.copyMatrix();
    const QStringList lines =
        QApplication::clipboard()->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    const Evaluation& e = w.result()->eval;
    QCOMPARE(int(lines.size()), e.classes() + 1);
    const QStringList header = lines[0].split(QLatin1Char('\t'));
    QCOMPARE(int(header.size()), e.classes() + 1);
    for (int c = 0; c < e.classes(); ++c) {
      QCOMPARE(header[c + 1], QString::fromStdString(e.class_name(c)));
      const QStringList row = lines[c + 1].split(QLatin1Char('\t'));
      QCOMPARE(row[0], QString::fromStdString(e.class_name(c)));
      for (int p = 0; p < e.classes(); ++p)
        QCOMPARE(row[p + 1].toLongLong(), qlonglong(e.synced->at(c, p)));
    }
  }

  // View > Fix colour range keeps the ranges while the scenario changes; off, each its own.
  void fixedRangeSurvivesAChange() {
    MainWindow w;
    QVERIFY(show(w, padded(51, 4)));
    const double matrices = part<MatrixPanel>(w)->syncedView()->data().valueMax;
    const double difference = part<MatrixPanel>(w)->differenceView()->data().valueMax;
    auto* fix = w.findChild<QAction*>(QStringLiteral("fixColourRange"));
    QVERIFY(fix);
    fix->setChecked(true);
    QVERIFY(show(w, padded(510, 3)));  // ten times the counts
    const double own = w.result()->eval.synced->at(0, 0);
    QVERIFY(own > matrices);
    QCOMPARE(part<MatrixPanel>(w)->syncedView()->data().valueMax, matrices);
    QCOMPARE(part<MatrixPanel>(w)->differenceView()->data().valueMax, difference);
    QCOMPARE(part<MatrixPanel>(w)->figureRanges().vmax, matrices);
    fix->setChecked(false);  // the views' own ranges, prepared in the background
    QTRY_VERIFY(part<MatrixPanel>(w)->syncedView()->data().valueMax >= own);
    QCOMPARE(part<MatrixPanel>(w)->figureRanges().vmax, 0.0);
  }

  void exportNameFromScenarioAndView() {
    MainWindow w;
    QVERIFY(showLesson(w, QStringLiteral("padding-duplicates")));
    QCOMPARE(
        ExportController::proposedName(part<MatrixPanel>(w)->syncedView(), w.scenario(), QString()),
        QStringLiteral("padding-duplicates-synced.png"));
    QCOMPARE(ExportController::proposedName(part<MatrixPanel>(w)->rankViews()[2], w.scenario(),
                                            QString()),
             QStringLiteral("padding-duplicates-rank-2.png"));
  }

  // 64 ranks: the strip scrolls inside a capped height instead of taking the window.
  void stripHeightIsCapped() {
    MainWindow w;
    QVERIFY(show(w, padded(60, 64)));
    auto* scroll = w.findChild<QScrollArea*>(QStringLiteral("shardStripScroll"));
    QVERIFY(scroll);
    auto* strip = w.findChild<ShardStrip*>(QStringLiteral("shardStrip"));
    QCOMPARE(strip->laneCount(), 66);
    QVERIFY2(scroll->height() <= w.height() / 4, qPrintable(QString::number(scroll->height())));
    QVERIFY(strip->height() > scroll->viewport()->height());  // the rest scrolls
  }

  // One duplicate among 999 indices (999 on 2 ranks pads one) is drawn in the "2× or
  // more" lane at the window's width.
  void singleDuplicateIsDrawn() {
    MainWindow w;
    QVERIFY(show(w, padded(111, 2)));
    const auto& times = w.result()->eval.times_evaluated;
    QCOMPARE(int(std::count_if(times.begin(), times.end(), [](uint8_t t) { return t > 1; })), 1);
    auto* strip = w.findChild<ShardStrip*>(QStringLiteral("shardStrip"));
    const QImage img = strip->grab().toImage();
    const QRectF lanes = strip->lanesRect();
    const double lh = lanes.height() / strip->laneCount();
    const int y = int(lanes.top() + lh * (strip->laneCount() - 0.5));
    int red = 0;
    for (int x = int(lanes.left()) + 1; x < int(lanes.right()); ++x) {
      const QColor c = img.pixelColor(x, y);
      red += c.red() > 150 && c.green() < 140 && c.blue() < 140;
    }
    QVERIFY2(red >= 2, qPrintable(QString::number(red)));
  }

  // An edited lesson is "(modified)": its title says so and its text keeps the lesson's
  // explanation, marked as describing the lesson's settings and naming what changed;
  // stepping the epoch is no edit; choosing the lesson restores it.
  void editedLessonIsMarkedModified() {
    MainWindow w;
    QVERIFY(showLesson(w, QStringLiteral("padding-duplicates")));
    auto* text = part<ScenarioPanel>(w)->findChild<QLabel*>(QStringLiteral("lessonText"));
    QVERIFY(text->text().startsWith(QStringLiteral("Look for:")));
    QVERIFY(!part<ScenarioPanel>(w)->lessonModified());
    QSignalSpy shown(&w, &MainWindow::resultShown);
    part<ScenarioPanel>(w)->stepEpoch(1);
    QVERIFY(shown.wait(30000) || shown.count() > 0);
    QVERIFY(!part<ScenarioPanel>(w)->lessonModified());
    shown.clear();
    part<ScenarioPanel>(w)->findChild<QSpinBox*>(QStringLiteral("worldSize"))->setValue(3);
    QVERIFY(shown.wait(30000) || shown.count() > 0);
    QVERIFY(part<ScenarioPanel>(w)->lessonModified());
    // The window says what is shown now: the lesson by name, modified, on 3 ranks; never the
    // lesson's "510 samples on 4 ranks".
    QVERIFY2(w.windowTitle().startsWith(
                 QStringLiteral("padding-duplicates (modified: World size 3) — epoch 1")),
             qPrintable(w.windowTitle()));
    QVERIFY2(!w.windowTitle().contains(QStringLiteral("4 ranks")), qPrintable(w.windowTitle()));
    // The explanation stays, marked as the lesson's, with the change named.
    QVERIFY2(text->text().startsWith(QStringLiteral("(modified: World size 4 → 3)")),
             qPrintable(text->text()));
    QVERIFY(text->text().contains(QStringLiteral("describes its own settings")));
    QVERIFY(text->text().contains(QStringLiteral("Look for:")));
    QVERIFY(showLesson(w, QStringLiteral("padding-duplicates")));
    QVERIFY(!part<ScenarioPanel>(w)->lessonModified());
    const QString lessonTitle = QString::fromStdString(load_preset("padding-duplicates").title);
    QCOMPARE(w.windowTitle(), lessonTitle + QStringLiteral(" — ShardLens"));
  }

  // A dataset that was refused never took effect: the note lists what the views show (the
  // world size), not the refused dataset, and so does the window's title.
  void refusedSettingIsNotListedAsAChange() {
    MainWindow w;
    QVERIFY(showLesson(w, QStringLiteral("padding-duplicates")));
    QSignalSpy shown(&w, &MainWindow::resultShown);
    part<ScenarioPanel>(w)->findChild<QSpinBox*>(QStringLiteral("worldSize"))->setValue(3);
    QVERIFY(shown.wait(30000) || shown.count() > 0);
    auto* dataset = part<ScenarioPanel>(w)->findChild<QComboBox*>(QStringLiteral("dataset"));
    QVERIFY(dataset);
    dataset->setCurrentText(QStringLiteral("synthetic:classes=10,n=500"));
    QVERIFY(QMetaObject::invokeMethod(dataset->lineEdit(), "editingFinished"));
    QTRY_VERIFY(!w.lastError().isEmpty());
    auto* text = part<ScenarioPanel>(w)->findChild<QLabel*>(QStringLiteral("lessonText"));
    QVERIFY2(text->text().startsWith(QStringLiteral("(modified: World size 4 → 3)")),
             qPrintable(text->text()));
    QVERIFY2(!text->text().contains(QStringLiteral("n=500")), qPrintable(text->text()));
    QVERIFY2(
        w.windowTitle().startsWith(QStringLiteral("padding-duplicates (modified: World size 3)")),
        qPrintable(w.windowTitle()));
  }

  // An opened scenario file is titled as a lesson is: its own title while its settings are
  // the file's, what changed once edited (its "8 ranks" never stays at 64).
  void editedScenarioFileIsMarkedModified() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("mine.json"));
    std::ofstream(path.toStdString())
        << R"({"name": "mine", "title": "Mine: 8 ranks", "description": "Eight ranks.",)"
        << R"( "dataset": "synthetic:classes=5,per-class=20", "world_size": 8})";
    MainWindow w;
    showQuietly(w);
    QSignalSpy shown(&w, &MainWindow::resultShown);
    QVERIFY(w.openScenario(path));
    QVERIFY(shown.wait(30000) || shown.count() > 0);
    QCOMPARE(w.windowTitle(), QStringLiteral("Mine: 8 ranks — ShardLens"));
    shown.clear();
    part<ScenarioPanel>(w)->findChild<QSpinBox*>(QStringLiteral("worldSize"))->setValue(64);
    QVERIFY(shown.wait(30000) || shown.count() > 0);
    QCOMPARE(w.windowTitle(), QStringLiteral("mine (modified: World size 64) — ShardLens"));
    auto* text = part<ScenarioPanel>(w)->findChild<QLabel*>(QStringLiteral("lessonText"));
    QVERIFY2(text->text().contains(QStringLiteral("(modified: World size 8 → 64)")),
             qPrintable(text->text()));
  }

  // Closing "What you are looking at" gives its height to the heatmaps, not to a gap.
  void closedWelcomeGivesTheViewsRoom() {
    MainWindow w;
    QVERIFY(showLesson(w, QStringLiteral("seed-lesson")));
    w.resize(1800, 1000);  // wide enough for the synced view to widen into the room
    auto* welcome = w.findChild<QWidget*>(QStringLiteral("welcomePanel"));
    QVERIFY(welcome);
    welcome->show();
    QTest::qWait(50);
    const int before = part<MatrixPanel>(w)->syncedView()->height();
    QTest::mouseClick(welcome->findChild<QWidget*>(QStringLiteral("welcomeClose")), Qt::LeftButton);
    QTest::qWait(50);
    QVERIFY(welcome->isHidden());
    QVERIFY2(part<MatrixPanel>(w)->syncedView()->height() > before,
             qPrintable(QStringLiteral("%1 -> %2")
                            .arg(before)
                            .arg(part<MatrixPanel>(w)->syncedView()->height())));
    // What the square views cannot use goes to the per-rank views (upright cells), so no
    // empty band is left below them.
    auto* rank = part<MatrixPanel>(w)->findChild<QWidget*>(QStringLiteral("rankView0"));
    QVERIFY(rank);
    const int band = part<MatrixPanel>(w)->height() - rank->geometry().bottom();
    QVERIFY2(band < 24,
             qPrintable(QStringLiteral("%1 px left empty below the per-rank views").arg(band)));
  }

  // With many ranks the per-rank rows overflow and the panel scrolls: the top row keeps
  // its views readable instead of being squeezed to nothing.
  void manyRanksKeepTheTopRowReadable() {
    MainWindow w;
    QVERIFY(show(w, padded(40, 64)));
    w.resize(1800, 1000);
    QTest::qWait(50);
    const int synced = part<MatrixPanel>(w)->syncedView()->height();
    const int expected = part<MatrixPanel>(w)->expectedView()->height();
    QVERIFY2(expected >= synced / 3 && expected > 100,
             qPrintable(QStringLiteral("synced %1 px, expected %2 px").arg(synced).arg(expected)));
    auto* rank = part<MatrixPanel>(w)->findChild<QWidget*>(QStringLiteral("rankView63"));
    QVERIFY(rank);
    QVERIFY2(rank->height() > 100,
             qPrintable(QStringLiteral("rank 63: %1 px").arg(rank->height())));
  }

  // Long class names in a narrow charts panel turn upright instead of being cut to "T…";
  // short ones stay horizontal.
  void chartLabelsAreNotCut() {
    QTemporaryDir dir;
    const QString names = dir.filePath(QStringLiteral("names.txt"));
    std::ofstream(names.toStdString()) << "T-shirt/top\nPullover\nAnkle boot\nSneaker\n";
    Scenario s = padded(10, 2);
    s.dataset = "synthetic:classes=4,per-class=10,names=" + names.toStdString();
    MainWindow w;
    QVERIFY(show(w, s));
    QChartView* chart = part<ChartsPanel>(w)->classChart();
    chart->resize(260, 300);
    ChartsPanel::fitCategoryLabels(chart);
    auto* axis = qobject_cast<QBarCategoryAxis*>(chart->chart()->axes(Qt::Horizontal).front());
    QVERIFY(axis);
    QCOMPARE(axis->categories().front(), QStringLiteral("T-shirt/top"));
    QCOMPARE(axis->labelsAngle(), -90);
    s.dataset = "synthetic:classes=4,per-class=10";  // names "0".."3"
    QVERIFY(show(w, s));
    chart->resize(600, 300);
    ChartsPanel::fitCategoryLabels(chart);
    axis = qobject_cast<QBarCategoryAxis*>(chart->chart()->axes(Qt::Horizontal).front());
    QCOMPARE(axis->labelsAngle(), 0);
  }
};

QTEST_MAIN(TestWindowTools)
#include "test_window_tools.moc"

// File > Follow runs folder, offscreen: run files of the seed lesson's epochs (written by core,
// as the recorder's import writes them) land in a folder one after another, each under a
// temporary name renamed into place as the writers do. The followed run grows (the epoch
// stepper and the drift gain each validation), no file is read twice, temporary, hidden and
// half-written files are never shown, a malformed file is one error, the epoch the user
// stepped to is kept, and a folder that vanishes stops the following with what was loaded kept.
#include <QAction>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "core/evaluation/scenario.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "tests/ui/ui_test_util.h"
#include "ui/controllers/follow_controller.h"
#include "ui/main_window.h"
#include "ui/models/followed_runs.h"
#include "ui/panels/run_banner.h"
#include "ui/views/charts.h"
#include "ui/views/drift_view.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::part;
using shardlens::ui::test::showQuietly;

namespace {

constexpr int kWaitMs = 30000;

// The seed lesson's epochs: shuffled and batch-limited, so each epoch's rows differ.
const std::vector<RunFile>& seedEpochs() {
  static const std::vector<RunFile> epochs = [] {
    Scenario s = load_scenario_file(SHARDLENS_LESSON_DIR "/seed-lesson.json");
    std::vector<RunFile> out;
    for (int e = 0; e < 6; ++e) {
      s.sampler.epoch = e;
      out.push_back(run_from_evaluation(simulate(s)));
    }
    return out;
  }();
  return epochs;
}

QByteArray fileBytes(const RunFile& run, const QString& scratch) {
  save_run_file(run, scratch.toStdString());
  QFile f(scratch);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Lands epoch `e` in `folder` as eval_epoch{e}.slrun the way the writers do: a temporary file
// beside it, renamed into place.
void land(const QString& folder, int e) {
  const QString target = QDir(folder).filePath(QStringLiteral("eval_epoch%1.slrun").arg(e));
  save_run_file(seedEpochs()[size_t(e)], (target + QStringLiteral(".tmp-a1b2c3d4")).toStdString());
  QVERIFY(QFile::rename(target + QStringLiteral(".tmp-a1b2c3d4"), target));
}

QAction* action(MainWindow& w, const QString& text) {
  for (QAction* a : w.findChildren<QAction*>())
    if (a->text() == text) return a;
  return nullptr;
}

QString followStatus(MainWindow& w) {
  return w.findChild<QLabel*>(QStringLiteral("followStatus"))->text();
}

}  // namespace

class TestFollow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(!seedEpochs().empty());
  }

  // Each landing is one more validation of one run, shown as it lands; nothing is read twice.
  void theRunGrowsAsItsFilesLand() {
    QTemporaryDir dir;
    MainWindow w;
    showQuietly(w);
    auto* follow = part<FollowController>(w);
    QVERIFY(w.followRuns(dir.path()));
    QTRY_VERIFY_WITH_TIMEOUT(w.result(), kWaitMs);  // the last scenario behind it
    QVERIFY(followStatus(w).contains(QStringLiteral("waiting for the first run file")));
    for (int e = 0; e < 3; ++e) {
      land(dir.path(), e);
      QTRY_VERIFY_WITH_TIMEOUT(w.showingRun() && w.result()->eval.epoch() == e, kWaitMs);
      QCOMPARE(w.result()->epochs->size(), size_t(e + 1));
      QCOMPARE(w.result()->eval.synced->cells, seedEpochs()[size_t(e)].synced.cells);
    }
    QVERIFY(w.lastError().isEmpty());
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("eval_epoch2.slrun")));
    QVERIFY(part<RunBanner>(w)->detailsText().contains(QStringLiteral("3 of 3 recorded")));
    QVERIFY(action(w, QStringLiteral("&Next epoch"))->isEnabled());
    // The drift has a column per validation, each the synced row sums minus the true counts.
    const render::DriftFigure& f = part<ChartsPanel>(w)->driftView()->figure();
    QCOMPARE(int(f.drift.columns.size()), 3);
    QCOMPARE(f.highlight, 2);
    for (size_t k = 0; k < 3; ++k) {
      const auto rows = seedEpochs()[k].synced.row_sums();
      for (int c = 0; c < f.drift.classes; ++c)
        QCOMPARE(f.drift.at(c, k),
                 rows[size_t(c)] - double(seedEpochs()[k].meta.class_counts[size_t(c)]));
    }
    QVERIFY(followStatus(w).contains(QStringLiteral("3 validations loaded")));
    // Looked at again and again (F5, the poll, notifications): each file was read once.
    follow->setPollInterval(50);
    for (int k = 0; k < 5; ++k) {
      follow->rescan();
      QTest::qWait(60);
    }
    QCOMPARE(follow->reads(), 3);
    QCOMPARE(follow->runs().filesAdded(), 3);
    // A file rewritten in place is read again and replaces its validation.
    QTest::qWait(1100);  // a modification time of its own on coarse filesystems
    const QString epoch1 = dir.filePath(QStringLiteral("eval_epoch1.slrun"));
    save_run_file(seedEpochs()[4], epoch1.toStdString());
    QTRY_COMPARE_WITH_TIMEOUT(follow->reads(), 4, kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(follow->runs().filesAdded(), 4, kWaitMs);
    QCOMPARE(follow->runs().size(), size_t(3));
  }

  // Epochs in training order whatever order their files land in; the newest is the one that
  // landed last.
  void validationsAreInTrainingOrder() {
    QTemporaryDir dir;
    FollowedRuns runs;
    for (int e : {2, 0, 1}) {
      land(dir.path(), e);
      runs.add(
          loadFollowedFile(dir.filePath(QStringLiteral("eval_epoch%1.slrun").arg(e)), nullptr));
    }
    QCOMPARE(runs.size(), size_t(3));
    for (size_t k = 0; k < 3; ++k) {
      QCOMPARE(runs.at(k)->eval.epoch(), int64_t(k));
      QCOMPARE(runs.at(k)->epochIndex, k);
      QCOMPARE(runs.at(k)->eval.provenance.epochs, size_t(3));
      QCOMPARE(runs.at(k)->epochs.get(), runs.at(0)->epochs.get());  // one sibling list
    }
    QCOMPARE(runs.newest()->eval.epoch(), int64_t(1));
    // A result kept from the set keeps its siblings when the set goes.
    ResultPtr kept = runs.at(0);
    runs = FollowedRuns();
    QCOMPARE(kept->epochs->size(), size_t(3));
    QCOMPARE(kept->epochs->at(2)->eval.epoch(), int64_t(2));
  }

  // A user who stepped back stays there, told how many are new; back on the newest, the
  // landings are shown again.
  void theEpochTheUserChoseIsKept() {
    QTemporaryDir dir;
    MainWindow w;
    showQuietly(w);
    auto* follow = part<FollowController>(w);
    for (int e = 0; e < 3; ++e) land(dir.path(), e);
    int runsShown = 0;
    connect(&w, &MainWindow::resultShown, this, [&] { runsShown += w.showingRun(); });
    QVERIFY(w.followRuns(dir.path()));
    QTRY_VERIFY_WITH_TIMEOUT(
        follow->runs().size() == 3 && w.showingRun() && w.result()->eval.epoch() == 2, kWaitMs);
    QTest::qWait(100);
    QCOMPARE(runsShown, 1);  // what the folder held: its newest shown, not each in turn
    action(w, QStringLiteral("&Previous epoch"))->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(w.result()->eval.epoch(), int64_t(1), kWaitMs);
    land(dir.path(), 3);
    QTRY_COMPARE_WITH_TIMEOUT(follow->runs().size(), size_t(4), kWaitMs);
    land(dir.path(), 4);
    QTRY_COMPARE_WITH_TIMEOUT(follow->runs().size(), size_t(5), kWaitMs);
    QTest::qWait(100);
    QCOMPARE(w.result()->eval.epoch(), int64_t(1));  // stays where the user is
    QCOMPARE(follow->unseen(), 2);
    QVERIFY2(followStatus(w).contains(
                 QStringLiteral("5 validations loaded; 2 new validations not shown yet")),
             qPrintable(followStatus(w)));
    QVERIFY(part<RunBanner>(w)->detailsText().contains(QStringLiteral("2 of 5 recorded")));
    // The drift gains the new columns, the user's epoch still outlined.
    QCOMPARE(part<ChartsPanel>(w)->driftView()->figure().drift.columns.size(), size_t(5));
    QCOMPARE(part<ChartsPanel>(w)->driftView()->figure().highlight, 1);
    // Stepping on reaches the new ones, each seen once stepped to; from the newest, landings
    // are shown again.
    action(w, QStringLiteral("&Next epoch"))->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(w.result()->eval.epoch(), int64_t(2), kWaitMs);
    QCOMPARE(follow->unseen(), 2);
    action(w, QStringLiteral("&Next epoch"))->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(w.result()->eval.epoch(), int64_t(3), kWaitMs);
    QCOMPARE(follow->unseen(), 1);
    QVERIFY2(followStatus(w).contains(QStringLiteral("; 1 new validation not shown yet")),
             qPrintable(followStatus(w)));
    action(w, QStringLiteral("&Next epoch"))->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(w.result()->eval.epoch(), int64_t(4), kWaitMs);
    QCOMPARE(follow->unseen(), 0);
    QVERIFY(!followStatus(w).contains(QStringLiteral("new")));
    land(dir.path(), 5);
    QTRY_COMPARE_WITH_TIMEOUT(w.result()->eval.epoch(), int64_t(5), kWaitMs);
    QCOMPARE(part<ChartsPanel>(w)->driftView()->figure().drift.columns.size(), size_t(6));
    QCOMPARE(follow->reads(), 6);
  }

  // Temporary and hidden names are never read; a file still being written is tried again
  // quietly; one that stays unreadable is one error, not one per look.
  void unfinishedFilesAreNotShown() {
    QTemporaryDir dir;
    MainWindow w;
    showQuietly(w);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    auto* follow = part<FollowController>(w);
    const QByteArray bytes = fileBytes(seedEpochs()[0], dir.filePath(QStringLiteral("x.bin")));
    QVERIFY(bytes.size() > 1000);
    QVERIFY(QFile::remove(dir.filePath(QStringLiteral("x.bin"))));
    QVERIFY(test::writeTestFile(dir.filePath(QStringLiteral("eval_epoch0.slrun.tmp-0f3c9a2b")),
                                bytes.left(bytes.size() / 2)));
    QVERIFY(test::writeTestFile(dir.filePath(QStringLiteral(".eval_epoch0.slrun")), bytes));
    QVERIFY(w.followRuns(dir.path()));
    QTRY_VERIFY_WITH_TIMEOUT(w.result(), kWaitMs);
    QTest::qWait(200);
    QCOMPARE(follow->reads(), 0);
    // Half a file under its final name (a copy in place): read, refused quietly, read again
    // once it is whole.
    const QString path = dir.filePath(QStringLiteral("eval_epoch0.slrun"));
    QVERIFY(test::writeTestFile(path, bytes.left(bytes.size() / 2)));
    QTRY_VERIFY_WITH_TIMEOUT(follow->reads() >= 1, kWaitMs);
    QTest::qWait(100);
    QVERIFY(!w.showingRun());
    QVERIFY(follow->runs().empty());
    QVERIFY(test::writeTestFile(path, bytes));
    QTRY_VERIFY_WITH_TIMEOUT(w.showingRun(), kWaitMs);
    QCOMPARE(errors.count(), 0);
    QCOMPARE(follow->runs().size(), size_t(1));
    // A malformed file that is not changing: the usual error, once.
    const QString bad = dir.filePath(QStringLiteral("eval_epoch1.slrun"));
    QVERIFY(test::writeTestFile(bad, QByteArray("not a run file")));
    QFile badFile(bad);
    QVERIFY(badFile.open(QIODevice::ReadWrite));
    QVERIFY(badFile.setFileTime(QDateTime::currentDateTime().addSecs(-3600),
                                QFileDevice::FileModificationTime));
    badFile.close();
    follow->rescan();
    QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, kWaitMs);
    QVERIFY2(w.lastError().contains(QStringLiteral("eval_epoch1.slrun")),
             qPrintable(w.lastError()));
    const int reads = follow->reads();
    for (int k = 0; k < 4; ++k) {
      follow->rescan();
      QTest::qWait(150);
    }
    QCOMPARE(errors.count(), 1);
    QCOMPARE(follow->reads(), reads);
    QVERIFY(follow->following());
    QCOMPARE(w.result()->eval.epoch(), int64_t(0));
  }

  // The folder goes: a message, following stops, what was loaded stays.
  void aVanishingFolderStopsTheFollowing() {
    QTemporaryDir parent;
    const QString folder = parent.filePath(QStringLiteral("runs"));
    QVERIFY(QDir().mkpath(folder));
    MainWindow w;
    showQuietly(w);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    auto* follow = part<FollowController>(w);
    land(folder, 0);
    land(folder, 1);
    QVERIFY(w.followRuns(folder));
    QTRY_VERIFY_WITH_TIMEOUT(follow->runs().size() == 2 && w.showingRun(), kWaitMs);
    QVERIFY(QDir(folder).removeRecursively());
    QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, kWaitMs);
    QVERIFY2(w.lastError().contains(QStringLiteral("is gone")), qPrintable(w.lastError()));
    QVERIFY(!follow->following());
    QVERIFY(w.findChild<QLabel*>(QStringLiteral("followStatus"))->isHidden());
    QVERIFY(!w.findChild<QAction*>(QStringLiteral("stopFollowing"))->isEnabled());
    QVERIFY(w.showingRun());
    QCOMPARE(w.result()->epochs->size(), size_t(2));
    // Made again: not followed any more.
    QVERIFY(QDir().mkpath(folder));
    land(folder, 2);
    QTest::qWait(300);
    QCOMPARE(follow->reads(), 2);
    QCOMPARE(errors.count(), 1);
    // Not a folder at all.
    QVERIFY(!w.followRuns(parent.filePath(QStringLiteral("nothing-here"))));
    QCOMPARE(errors.count(), 2);
  }

  // File > Stop following, or another file opened, ends it; what is shown stays.
  void stoppingKeepsWhatIsShown() {
    QTemporaryDir dir;
    MainWindow w;
    showQuietly(w);
    auto* follow = part<FollowController>(w);
    land(dir.path(), 0);
    QVERIFY(w.followRuns(dir.path()));
    QTRY_VERIFY_WITH_TIMEOUT(w.showingRun(), kWaitMs);
    QAction* stop = w.findChild<QAction*>(QStringLiteral("stopFollowing"));
    QVERIFY(stop->isEnabled());
    stop->trigger();
    QVERIFY(!follow->following());
    land(dir.path(), 1);
    follow->rescan();
    QTest::qWait(300);
    QCOMPARE(follow->reads(), 1);
    QVERIFY(w.showingRun());
    // Following again, then opening another run file.
    QVERIFY(w.followRuns(dir.path()));
    QTRY_COMPARE_WITH_TIMEOUT(follow->runs().size(), size_t(2), kWaitMs);
    QTemporaryDir other;
    const QString single = other.filePath(QStringLiteral("single.slrun"));
    save_run_file(seedEpochs()[5], single.toStdString());
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.openRun(single);
    QVERIFY(!follow->following());
    QTRY_VERIFY_WITH_TIMEOUT(w.result()->runPath == single, kWaitMs);
    land(dir.path(), 2);
    QTest::qWait(300);
    QCOMPARE(w.result()->runPath, single);
  }
};

QTEST_MAIN(TestFollow)
#include "test_follow.moc"

// A scripted soak of the main window: setting changes, epoch plays and run-file
// opens in quick succession, with cancellations in between, as an impatient user makes
// them. No crash; after every burst the view shows the result of the latest request (never
// a stale one that finished late); resident memory after the first 100 steps grows by less
// than 5 %. SHARDLENS_SOAK_STEPS sets the number of steps (ctest runs 300, and 2,000 under
// the `slow` label); the figures are printed for the bench notes. SOAK_DEBUG=1 prints the
// resident size and malloc's bytes in use every 100 steps (a leak grows both steadily; it
// found the run files' epochs owning themselves).
#include <malloc.h>
#include <unistd.h>

#include <QAction>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>
#include <fstream>

#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "tests/ui/ui_test_util.h"
#include "ui/main_window.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::part;
using shardlens::ui::test::showQuietly;

namespace {

Scenario scenarioFor(int step) {
  Scenario s;
  s.name = "soak";
  s.dataset = "synthetic:classes=" + std::to_string(3 + step % 5) + ",per-class=20";
  s.sampler.world_size = 1 + step % 4;
  s.sampler.seed = step;
  s.sampler.shuffle = step % 2 == 0;
  s.loader.batch_size = 4 + step % 7;
  return s;
}

// Resident set size in KiB (VmRSS of /proc/self/status).
long residentKib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long kib = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> kib;
      return kib;
    }
    status.ignore(1 << 10, '\n');
  }
  return 0;
}

int soakSteps() {
  const QByteArray env = qgetenv("SHARDLENS_SOAK_STEPS");
  return env.isEmpty() ? 300 : env.toInt();
}

}  // namespace

class TestSoak : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
  }

  void settingsEpochsRunsAndCancels() {
    const int steps = soakSteps();
    QVERIFY(steps >= 100);
    // Two run files: one epoch, and several (so epoch plays step through a run too).
    const QString single = m_dir.filePath(QStringLiteral("single.slrun"));
    save_run_file(run_from_evaluation(simulate(scenarioFor(1))), single.toStdString());
    const QString multi = m_dir.filePath(QStringLiteral("epochs.slrun"));
    std::vector<RunFile> epochs;
    for (int e = 0; e < 3; ++e) {
      Scenario s = scenarioFor(2);
      s.sampler.epoch = e;
      epochs.push_back(run_from_evaluation(simulate(s)));
      epochs.back().meta.epoch = e;
    }
    save_run_epochs(epochs, multi.toStdString());

    MainWindow w;
    showQuietly(w);
    QAction* nextEpoch = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == QStringLiteral("&Next epoch")) nextEpoch = a;
    QVERIFY(nextEpoch);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    QString expectedRun;  // the run file last asked for, or empty for a simulation
    long rssAt100 = 0;
    QElapsedTimer clock;
    clock.start();
    for (int step = 0; step < steps; ++step) {
      switch (step % 10) {
        case 3:  // open a run file, then change settings before it has loaded (below)
        case 7:
          expectedRun = step % 20 == 7 ? multi : single;
          w.openRun(expectedRun);
          break;
        case 4:  // Run > Next epoch: the simulation's set_epoch, or the run's next epoch
          nextEpoch->trigger();
          break;
        case 5:  // cancel whatever is running
          part<EvaluationRunner>(w)->cancel();
          break;
        case 8:  // back to the simulation
          w.leaveRun();
          expectedRun.clear();
          break;
        default: {  // a setting change (supersedes any job in flight)
          if (w.showingRun()) w.leaveRun();
          expectedRun.clear();
          w.setScenario(scenarioFor(step));
          break;
        }
      }
      QCoreApplication::processEvents();
      if (step % 10 == 9 || step % 20 == 7) {
        // Settle, and check that what is shown is what was asked for last. A cancel with
        // nothing after it leaves the previous result, so ask once more when idle.
        part<EvaluationRunner>(w)->waitIdle();
        QCoreApplication::processEvents();
        QSignalSpy shown(&w, &MainWindow::resultShown);
        if (expectedRun.isEmpty())
          w.recompute();
        else
          w.openRun(expectedRun);
        QVERIFY(shown.wait(30000));
        part<EvaluationRunner>(w)->waitIdle();
        QCoreApplication::processEvents();
        QVERIFY(w.result());
        if (expectedRun.isEmpty()) {
          QVERIFY2(!w.showingRun(), qPrintable(QString::number(step)));
          const Scenario& shownScenario = w.result()->eval.scenario();
          QCOMPARE(shownScenario.sampler.seed, w.scenario().sampler.seed);
          QCOMPARE(shownScenario.sampler.world_size, w.scenario().sampler.world_size);
          QCOMPARE(shownScenario.sampler.epoch, w.scenario().sampler.epoch);
          QCOMPARE(shownScenario.dataset, w.scenario().dataset);
        } else {
          QVERIFY(w.showingRun());
          QCOMPARE(w.result()->runPath, expectedRun);
        }
      }
      if (step + 1 == 100) rssAt100 = residentKib();
      if (qEnvironmentVariableIsSet("SOAK_DEBUG") && (step + 1) % 100 == 0) {
        const auto mi = mallinfo2();
        std::printf("step %d rss %ld KiB inuse %zu KiB arena %zu KiB mmap %zu KiB\n", step + 1,
                    residentKib(), mi.uordblks / 1024, mi.arena / 1024, mi.hblkhd / 1024);
      }
    }
    part<EvaluationRunner>(w)->waitIdle();
    QCoreApplication::processEvents();
    const long rssEnd = residentKib();
    const double growth = 100.0 * double(rssEnd - rssAt100) / double(rssAt100);
    std::printf("soak: %d steps in %.1f s; RSS after 100: %ld KiB, after %d: %ld KiB (%+.2f %%)\n",
                steps, clock.elapsed() / 1000.0, rssAt100, steps, rssEnd, growth);
    QCOMPARE(errors.count(), 0);
    QVERIFY2(growth < 5.0, qPrintable(QStringLiteral("RSS grew %1 %").arg(growth)));
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestSoak)
#include "test_soak.moc"

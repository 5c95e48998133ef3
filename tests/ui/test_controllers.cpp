// The main window's controllers alone, without a window: recent files, settings, opening runs
// and stepping their epochs, Compare with… (its picker lists a run's evaluations from the
// run's meta.json alone), Import dumps…, Export data (the CSV equals the CLI's), and the event
// loop turning while a compare or an import of millions of samples runs.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QMenu>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <algorithm>

#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/report/export.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "tests/ui/ui_test_util.h"
#include "ui/controllers/compare_controller.h"
#include "ui/controllers/export_controller.h"
#include "ui/controllers/import_controller.h"
#include "ui/controllers/run_opener.h"
#include "ui/dialogs/compare_dialog.h"
#include "ui/jobs/evaluation_runner.h"
#include "ui/models/recent_files.h"
#include "ui/models/shown_source.h"
#include "ui/settings/settings.h"

using namespace shardlens;
using namespace shardlens::ui;

namespace test = shardlens::ui::test;

namespace {

// Export data… of the matrices, as the GUI writes it; false when nothing was written.
bool writeMatricesFromTheGui(const ResultPtr& result, const QString& path) {
  QWidget window;
  EvaluationRunner runner;
  ExportController exporter(&runner, &window);
  QSignalSpy written(&exporter, &ExportController::written);
  exporter.writeData(result, path, ExportController::DataKind::Matrices);
  return written.wait(30000);
}

Scenario scenarioOf(int64_t perClass, int world) {
  return test::syntheticScenario("controllers", 10, perClass, world, 10);
}

// A run file of `epochs` epochs of a small scenario, for the pickers and the epoch steps.
std::vector<RunFile> epochRuns(int epochs) {
  Scenario s = scenarioOf(20, 2);
  s.sampler.shuffle = true;
  std::vector<RunFile> runs;
  for (int e = 0; e < epochs; ++e) {
    s.sampler.epoch = e;
    runs.push_back(run_from_evaluation(simulate(s)));
  }
  return runs;
}

// Ticks of a 10 ms timer while `running()` holds: the longest gap between two, in ms.
template <class Running>
qint64 longestGapWhile(Running running, int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  qint64 last = 0, longest = 0;
  QTimer tick;
  tick.setInterval(10);
  QObject::connect(&tick, &QTimer::timeout, [&] {
    const qint64 now = clock.elapsed();
    longest = std::max(longest, now - last);
    last = now;
  });
  tick.start();
  while (running() && clock.elapsed() < timeoutMs) QTest::qWait(5);
  return std::max(longest, clock.elapsed() - last);
}

}  // namespace

class TestControllers : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // settings of their own, not the user's
    QVERIFY(m_dir.isValid());
  }

  void settingsAreTypedAndDefaulted() {
    Settings::setExportDpi(300);
    QCOMPARE(Settings::exportDpi(), 300);
    Settings::setWelcomeDismissed(true);
    QVERIFY(Settings::welcomeDismissed());
    Settings::setWelcomeDismissed(false);
    ViewOptions o;
    o.style.scale = render::ColourScale::Log;
    o.style.showValues = false;
    o.matrix.normalization = Normalization::True;
    Settings::setViewOptions(o);
    const ViewOptions back = Settings::viewOptions();
    QCOMPARE(int(back.style.scale), int(render::ColourScale::Log));
    QVERIFY(!back.style.showValues);
    QCOMPARE(int(back.matrix.normalization), int(Normalization::True));
    Settings::setMemoryBudget(QStringLiteral("2G"));
    QCOMPARE(Settings::memoryBudget(), QStringLiteral("2G"));
    Settings::setMemoryBudget(QString());
  }

  void recentFilesMostRecentFirstWithoutRepeats() {
    Settings::setRecentFiles({});
    QMenu menu;
    RecentFiles recent(&menu);
    QVERIFY(!menu.isEnabled());
    for (int k = 0; k < Settings::kMaxRecentFiles + 2; ++k)
      recent.add(m_dir.filePath(QStringLiteral("s%1.json").arg(k)));
    recent.add(m_dir.filePath(QStringLiteral("s5.json")));  // again: moves to the top
    const QStringList paths = recent.paths();
    QCOMPARE(paths.size(), Settings::kMaxRecentFiles);
    QCOMPARE(paths.front(), m_dir.filePath(QStringLiteral("s5.json")));
    QCOMPARE(paths.count(m_dir.filePath(QStringLiteral("s5.json"))), 1);
    QVERIFY(!paths.contains(m_dir.filePath(QStringLiteral("s0.json"))));  // the oldest went
    QCOMPARE(menu.actions().size(), Settings::kMaxRecentFiles);
    QSignalSpy open(&recent, &RecentFiles::openRequested);
    menu.actions().front()->trigger();
    QCOMPARE(open.size(), 1);
    QCOMPARE(open.front().front().toString(), paths.front());
  }

  void listsEvaluationsFromMetaAlone_data() {
    QTest::addColumn<int>("format");
    QTest::addColumn<QStringList>("labels");
    QTest::newRow("one evaluation (version 1)") << 1 << QStringList{QStringLiteral("epoch 0")};
    QTest::newRow("epochs (version 2)")
        << 2
        << QStringList{QStringLiteral("epoch 0"), QStringLiteral("epoch 1"),
                       QStringLiteral("epoch 2")};
    QTest::newRow("dataloaders (version 3)")
        << 3
        << QStringList{QStringLiteral("epoch 0, dataloader 0"),
                       QStringLiteral("epoch 0, dataloader 1")};
  }
  void listsEvaluationsFromMetaAlone() {
    QFETCH(int, format);
    QFETCH(QStringList, labels);
    std::vector<RunFile> runs = epochRuns(format == 2 ? 3 : format == 3 ? 2 : 1);
    if (format == 1) runs.front().meta.epoch = 0;
    if (format == 3)
      for (size_t k = 0; k < runs.size(); ++k) {
        runs[k].meta.epoch = 0;
        runs[k].meta.dataloader_idx = int64_t(k);
      }
    const QString path = m_dir.filePath(QStringLiteral("list%1.slrun").arg(format));
    save_run_epochs(runs, path.toStdString());
    QCOMPARE(CompareController::evaluationLabels(list_run_evaluations(path.toStdString())), labels);
    // Junk and a missing file are named.
    const QString junkPath = m_dir.filePath(QStringLiteral("junk.slrun"));
    QVERIFY(test::writeTestFile(junkPath, "not a run"));
    for (const QString& bad : {junkPath, m_dir.filePath(QStringLiteral("none.slrun"))}) {
      try {
        list_run_evaluations(bad.toStdString());
        QFAIL("no error");
      } catch (const InputError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).startsWith(bad), e.what());
      }
    }
  }

  void runOpenerOpensStepsAndNamesFailures() {
    const QString path = m_dir.filePath(QStringLiteral("three.slrun"));
    save_run_epochs(epochRuns(3), path.toStdString());
    EvaluationRunner runner;
    RunOpener opener(&runner);
    QSignalSpy finished(&runner, &EvaluationRunner::finished);
    QSignalSpy opening(&opener, &RunOpener::opening);
    opener.open(path);
    QCOMPARE(opening.size(), 1);
    QVERIFY(finished.wait(30000));
    const ResultPtr shown = finished.front().front().value<ResultPtr>();
    QCOMPARE(shown->runPath, path);
    QCOMPARE(shown->epochIndex, size_t(0));
    QCOMPARE(ShownSource::epochAfter(shown, 1)->epochIndex, size_t(1));
    QCOMPARE(ShownSource::epochAfter(shown, -1)->epochIndex, size_t(2));  // wraps
    QCOMPARE(ShownSource::epochAfter(ShownSource::epochAfter(shown, 2), 1)->eval.epoch(),
             shown->eval.epoch());
    QVERIFY(!ShownSource::epochAfter(nullptr, 1));
    QSignalSpy steps(&opener, &RunOpener::playStep);
    opener.togglePlay();
    QVERIFY(opener.playing());
    QVERIFY(steps.wait(3000));
    opener.stopPlaying();
    QVERIFY(!opener.playing());
    // A failed open is worded as the file's; another job's failure is left as it is.
    QSignalSpy failed(&runner, &EvaluationRunner::failed);
    const quint64 job = opener.open(m_dir.filePath(QStringLiteral("none.slrun")));
    QVERIFY(failed.wait(30000));
    const QString message = failed.front().at(1).toString();
    QVERIFY(opener.failureText(job, message)
                .startsWith(QStringLiteral("Could not open the run file none.slrun.")));
    QCOMPARE(opener.failureText(job + 1, message), message);
  }

  void compareOpensBesideTheCurrentOrSaysWhyNot() {
    const QString path = m_dir.filePath(QStringLiteral("two.slrun"));
    const std::vector<RunFile> runs = epochRuns(2);
    save_run_epochs(runs, path.toStdString());
    QWidget window;
    EvaluationRunner runner;
    CompareController compare(&runner, &window);
    QCOMPARE(compare.compareWith(path), quint64(0));  // nothing on screen yet
    compare.setCurrent(std::make_shared<const Evaluation>(evaluation_from_run(runs[0], "a")),
                       QStringLiteral("epoch 0"));
    QSignalSpy opened(&compare, &CompareController::opened);
    QSignalSpy failed(&compare, &CompareController::failed);
    QVERIFY(compare.compareWith(path, 1) > 0);
    QVERIFY(opened.wait(30000));
    auto* dialog = opened.front().front().value<CompareDialog*>();
    QVERIFY(dialog);
    QVERIFY(dialog->windowTitle().contains(QStringLiteral("two.slrun@1")));
    compare.compareWith(path, std::nullopt, 5);
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.front().front().toString().contains(QStringLiteral("holds 2 evaluations")),
             qPrintable(failed.front().front().toString()));
  }

  void importWritesTheRunOrSaysWhyNot() {
    QWidget window;
    EvaluationRunner runner;
    ImportController import(&runner, &window);
    QSignalSpy imported(&import, &ImportController::imported);
    QSignalSpy failed(&import, &ImportController::failed);
    const QString bad = m_dir.filePath(QStringLiteral("bad_rank0.csv"));
    QVERIFY(test::writeTestFile(bad, "rank,index,target,prediction\n0,1,x,0\n"));
    const QString out = m_dir.filePath(QStringLiteral("imported.slrun"));
    import.importDumps({bad}, QString(), 0, out);
    QVERIFY(failed.wait(30000));
    QVERIFY(failed.front().front().toString().contains(QStringLiteral("bad_rank0.csv")));
    QVERIFY(!QFile::exists(out));
    const QString good = m_dir.filePath(QStringLiteral("good_rank0.csv"));
    QVERIFY(test::writeTestFile(good, "rank,index,target,prediction\n0,0,0,0\n0,1,1,1\n0,2,1,0\n"));
    import.importDumps({good}, QString(), 2, out);
    QVERIFY(imported.wait(30000));
    QCOMPARE(imported.front().front().toString(), out);
    QCOMPARE(load_run_file(out.toStdString()).synced.total(), 3.0);
  }

  void exportProposesNamesAndWritesData() {
    const RunFile run = epochRuns(1).front();
    auto result = std::make_shared<EvaluationResult>();
    result->eval = evaluation_from_run(run, "one.slrun");
    const QString csv = m_dir.filePath(QStringLiteral("gui-matrices.csv"));
    QVERIFY(writeMatricesFromTheGui(result, csv));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll().toStdString(), matrices_csv(result->eval));
  }

  // The figure set is painted in the background (QPainter on images, SVG and PDF).
  void exportWritesTheFigureSetInTheBackground() {
    auto result = std::make_shared<EvaluationResult>();
    result->eval = simulate(scenarioOf(20, 2));
    QWidget window;
    EvaluationRunner runner;
    ExportController exporter(&runner, &window);
    QSignalSpy written(&exporter, &ExportController::written);
    QSignalSpy failed(&exporter, &ExportController::failed);
    const QString dir = m_dir.filePath(QStringLiteral("figures"));
    QVERIFY(QDir().mkpath(dir));
    exporter.writeFigureSet(result, dir, 96, ViewOptions{}, render::FigureSetOptions{});
    QVERIFY(QTest::qWaitFor([&] { return !written.isEmpty() || !failed.isEmpty(); }, 60000));
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
    // per-rank, synced, expected and difference in three formats
    QCOMPARE(written.front().front().toString(), QStringLiteral("Wrote 12 files into %1").arg(dir));
    QCOMPARE(QDir(dir).entryList(QDir::Files).size(), 12);
  }

  // The CLI's `export --formats csv` writes the same matrices.csv as the GUI's Export data.
  void cliExportWritesTheGuisMatricesCsv() {
    const QString run = m_dir.filePath(QStringLiteral("cli.slrun"));
    save_run_file(epochRuns(1).front(), run.toStdString());
    auto result = std::make_shared<EvaluationResult>();
    result->eval = load_run_evaluation(run.toStdString());
    const QString gui = m_dir.filePath(QStringLiteral("gui.csv"));
    QVERIFY(writeMatricesFromTheGui(result, gui));
    const QString out = m_dir.filePath(QStringLiteral("cli-export"));
    QProcess cli;
    cli.start(QStringLiteral(SHARDLENS_TEST_CLI),
              {QStringLiteral("export"), QStringLiteral("--run"), run, QStringLiteral("--formats"),
               QStringLiteral("csv"), QStringLiteral("--out"), out});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    QFile a(gui), b(out + QStringLiteral("/matrices.csv"));
    QVERIFY(a.open(QIODevice::ReadOnly));
    QVERIFY(b.open(QIODevice::ReadOnly));
    const QByteArray bytes = a.readAll();
    QVERIFY(bytes.count('\n') > 100);
    QCOMPARE(b.readAll(), bytes);
  }

  // Compare and import run off the GUI thread: a 10 ms timer keeps ticking while
  // a run of 3 million samples is loaded and compared, and while 2 million records are
  // imported and saved; the result arrives.
  void eventLoopTurnsDuringCompare() {
    // 3,000,000 samples: loading them takes well over the bound on the GUI thread.
    const Scenario s = scenarioOf(300000, 4);
    const QString path = m_dir.filePath(QStringLiteral("million.slrun"));
    save_run_file(run_from_evaluation(simulate(s)), path.toStdString());
    QElapsedTimer loading;
    loading.start();
    (void)load_run_evaluations(path.toStdString());  // what the GUI thread would have waited
    qInfo("loading the run alone takes %lld ms", loading.elapsed());
    QWidget window;
    EvaluationRunner runner;
    CompareController compare(&runner, &window);
    compare.setCurrent(std::make_shared<const Evaluation>(simulate(scenarioOf(20, 2))),
                       QStringLiteral("small"));
    QSignalSpy opened(&compare, &CompareController::opened);
    QSignalSpy failed(&compare, &CompareController::failed);
    QVERIFY(compare.compareWith(path) > 0);
    const qint64 gap =
        longestGapWhile([&] { return opened.isEmpty() && failed.isEmpty(); }, 120000);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
    QCOMPARE(opened.size(), 1);
    qInfo("longest gap between ticks: %lld ms", gap);
    QVERIFY2(gap < 200, qPrintable(QStringLiteral("the event loop stopped for %1 ms").arg(gap)));
  }

  void eventLoopTurnsDuringImport() {
    constexpr int64_t kPerRank = 1000000;  // two ranks: 2,000,000 records
    QStringList dumps;
    for (int r = 0; r < 2; ++r) {
      std::vector<int64_t> index(kPerRank), target(kPerRank), prediction(kPerRank);
      for (int64_t k = 0; k < kPerRank; ++k) {
        index[size_t(k)] = 2 * k + r;
        target[size_t(k)] = index[size_t(k)] % 10;
        prediction[size_t(k)] = (index[size_t(k)] % 7 == 0) ? 0 : target[size_t(k)];
      }
      const QString dump = m_dir.filePath(QStringLiteral("million_rank%1.npz").arg(r));
      write_npz(dump.toStdString(), {{"index.npy", npy_bytes(index, {kPerRank})},
                                     {"target.npy", npy_bytes(target, {kPerRank})},
                                     {"prediction.npy", npy_bytes(prediction, {kPerRank})}});
      dumps << dump;
    }
    QWidget window;
    EvaluationRunner runner;
    ImportController import(&runner, &window);
    QSignalSpy imported(&import, &ImportController::imported);
    QSignalSpy failed(&import, &ImportController::failed);
    const QString out = m_dir.filePath(QStringLiteral("million-import.slrun"));
    QElapsedTimer importing;
    importing.start();
    import.importDumps(dumps, QString(), 10, out);
    const qint64 gap =
        longestGapWhile([&] { return imported.isEmpty() && failed.isEmpty(); }, 120000);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
    QCOMPARE(imported.size(), 1);
    QVERIFY(QFile::exists(out));
    qInfo("the import took %lld ms", importing.elapsed());
    qInfo("longest gap between ticks: %lld ms", gap);
    QVERIFY2(gap < 200, qPrintable(QStringLiteral("the event loop stopped for %1 ms").arg(gap)));
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestControllers)
#include "test_controllers.moc"

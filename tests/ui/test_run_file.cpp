// File > Open run end to end, offscreen: a run file written by core from the padding lesson
// opens through the main window's open-run path (off the GUI thread) and shows the row-sum
// mismatch, the padding-duplicates diagnosis, a read-only scenario with the run banner and
// views built from records; a run without an expected matrix or scenario says so; corrupt files
// give an error naming the file and keep the previous view.
#include <QChartView>
#include <QLabel>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QToolButton>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "core/evaluation/recorded_settings.h"
#include "core/evaluation/scenario.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "tests/ui/ui_test_util.h"
#include "ui/controllers/import_controller.h"
#include "ui/dialogs/compare_dialog.h"
#include "ui/main_window.h"
#include "ui/models/cell_info.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/metrics_panel.h"
#include "ui/panels/run_banner.h"
#include "ui/panels/scenario_panel.h"
#include "ui/render/heatmap_painter.h"
#include "ui/render/heatmap_source.h"
#include "ui/views/charts.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/shard_strip.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::comparison;
using shardlens::ui::test::mismatchPixels;
using shardlens::ui::test::part;
using shardlens::ui::test::showQuietly;

namespace {

RunFile paddingRun() {
  const Scenario s = load_scenario_file(SHARDLENS_LESSON_DIR "/padding-duplicates.json");
  return run_from_evaluation(simulate(s));
}

Scenario smallScenario() {
  return test::syntheticScenario("small", 5, 20, 2, 10);
}

// Saves `run` at `path`, shows the window and opens the run through File > Open run's path.
bool saveAndOpen(MainWindow& w, const RunFile& run, const QString& path) {
  save_run_file(run, path.toStdString());
  showQuietly(w);
  QSignalSpy shown(&w, &MainWindow::resultShown);
  w.openRun(path);
  return shown.wait(30000);
}

QString diagnosisText(MainWindow& w) {
  return w.findChild<QTextBrowser*>(QStringLiteral("diagnosis"))->toPlainText();
}

}  // namespace

class TestRunFile : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
  }

  void openRunShowsMismatchAndDiagnosis() {
    const QString path = m_dir.filePath(QStringLiteral("padding.slrun"));
    save_run_file(paddingRun(), path.toStdString());
    MainWindow w;
    showQuietly(w);
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.setScenario(smallScenario());
    QVERIFY(shown.wait(30000));
    QVERIFY(w.openFile(path));  // dispatches on .slrun to the background open-run path
    QVERIFY(shown.wait(30000));
    QVERIFY(w.lastError().isEmpty());
    QVERIFY(w.showingRun());
    QVERIFY(!w.result()->eval.provenance.file.empty());
    // The row-sum mismatch is marked in the synced view, none in the expected one.
    HeatmapView* synced = part<MatrixPanel>(w)->syncedView();
    QCOMPARE(synced->data().mismatchCount(), 2);
    QVERIFY(mismatchPixels(synced) > 0);
    QCOMPARE(mismatchPixels(part<MatrixPanel>(w)->expectedView()), 0);
    QCOMPARE(int(part<MatrixPanel>(w)->rankViews().size()), 4);
    // The diagnosis comes from the records alone.
    QVERIFY(diagnosisText(w).contains(QStringLiteral("padding-duplicates")));
    QVERIFY(w.findChild<QLabel*>(QStringLiteral("verdict"))->text().contains("wrong"));
    // Scenario read-only, with the banner.
    QVERIFY(!part<ScenarioPanel>(w)->isEnabled());
    QVERIFY(part<RunBanner>(w)->isVisible());
    QCOMPARE(part<RunBanner>(w)->text(),
             QStringLiteral("Run file: padding.slrun (simulated, 4 ranks, complete)"));
    QCOMPARE(part<ScenarioPanel>(w)->scenario().name, std::string("padding-duplicates"));
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("padding.slrun")));
    // Shard strip and cell samples from records: 510 on 4 ranks pads with 2 duplicates.
    int64_t padding = 0;
    for (const RankTotals& t : w.result()->shards.ranks) padding += t.padding;
    QCOMPARE(padding, int64_t(2));
    QCOMPARE(w.result()->shards.duplicatedTotal, int64_t(2));
    CellRef cell;
    cell.kind = ViewKind::Synced;
    cell.trueClass = cell.predClass = 0;
    int64_t total = 0;
    QVERIFY(!cellSamples(*w.result(), cell, 5, &total).empty());
    QCOMPARE(double(total), w.result()->eval.synced->at(0, 0));

    // Back to simulating the scenario shown before the run.
    w.leaveRun();
    QVERIFY(shown.wait(30000));
    QVERIFY(!w.showingRun());
    QVERIFY(w.result()->eval.provenance.file.empty());
    QVERIFY(part<ScenarioPanel>(w)->isEnabled());
    QVERIFY(!part<RunBanner>(w)->isVisible());
    QCOMPARE(part<ScenarioPanel>(w)->scenario().name, std::string("small"));
  }

  // A run that evaluated every sample knows every prediction: the expected and difference
  // views show, as for a simulation.
  // A run of several epochs: the epoch actions step through what was recorded (wrapping),
  // and the epoch chart shows every class's row drift over the epochs.
  void multiEpochRunStepsThroughItsEpochs() {
    Scenario s = load_scenario_file(SHARDLENS_LESSON_DIR "/seed-lesson.json");
    std::vector<RunFile> epochs;
    for (int e = 0; e < 3; ++e) {
      s.sampler.epoch = e;
      epochs.push_back(run_from_evaluation(simulate(s)));
    }
    const QString path = m_dir.filePath(QStringLiteral("epochs.slrun"));
    save_run_epochs(epochs, path.toStdString());
    MainWindow w;
    showQuietly(w);
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.openRun(path);
    QVERIFY(shown.wait(30000));
    QCOMPARE(w.result()->eval.epoch(), int64_t(0));
    QVERIFY(w.result()->epochs && w.result()->epochs->size() == 3);
    QVERIFY(part<RunBanner>(w)->detailsText().contains(QStringLiteral("Epoch 0 (1 of 3 recorded")));
    QAction* next = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == QStringLiteral("&Next epoch")) next = a;
    QVERIFY(next && next->isEnabled());
    const Matrix first = *w.result()->eval.synced;
    // Each epoch's views are prepared in the background before it is shown.
    next->trigger();
    QTRY_COMPARE(w.result()->eval.epoch(), int64_t(1));
    QCOMPARE(*w.result()->eval.synced, epochs[1].synced);
    QVERIFY2(part<ShardStrip>(w)->headerText().contains(QStringLiteral("epoch 1")),
             qPrintable(part<ShardStrip>(w)->headerText()));  // the strip follows the run
    QVERIFY(!(*w.result()->eval.synced == first));            // the seed lesson's rows drift
    next->trigger();
    next->trigger();  // before epoch 2 is shown: steps on from it, not from epoch 1
    QTRY_COMPARE(w.result()->eval.epoch(), int64_t(0));  // wrapped round
    // The banner's own stepper, as the scenario panel's is for a simulation.
    auto* bannerNext = part<RunBanner>(w)->findChild<QToolButton*>(QStringLiteral("runNextEpoch"));
    QVERIFY(bannerNext && bannerNext->isVisibleTo(part<RunBanner>(w)));
    bannerNext->click();
    QTRY_COMPARE(w.result()->eval.epoch(), int64_t(1));
    auto* bannerPrevious =
        part<RunBanner>(w)->findChild<QToolButton*>(QStringLiteral("runPreviousEpoch"));
    bannerPrevious->click();
    QTRY_COMPARE(w.result()->eval.epoch(), int64_t(0));
    // The drift figure: every class and epoch, each cell the synced row sum minus the true
    // count of that epoch, the shown epoch outlined.
    DriftView* drift = part<ChartsPanel>(w)->driftView();
    QVERIFY(!drift->isHidden());
    const render::DriftFigure& f = drift->figure();
    QCOMPARE(int(f.drift.columns.size()), 3);
    QCOMPARE(f.highlight, 0);
    for (size_t k = 0; k < 3; ++k) {
      const auto rows = epochs[k].synced.row_sums();
      for (int c = 0; c < f.drift.classes; ++c)
        QCOMPARE(f.drift.at(c, k),
                 rows[size_t(c)] - double(epochs[k].meta.class_counts[size_t(c)]));
    }
    QVERIFY(!drift->grab().isNull());
  }

  // Run > Simulate this run: a run made by ShardLens (its scenario recorded), and an imported
  // run whose dumps carried settings_json; each simulated like it ran equals it per rank and
  // synced, and the panel shows the settings.
  void simulateThisRunEqualsTheRun() {
    Scenario s = load_scenario_file(SHARDLENS_LESSON_DIR "/seed-lesson.json");
    s.sampler.epoch = 1;
    s.loader.limit = BatchLimit{};  // every sample evaluated: the run knows every prediction
    const RunFile simulated = run_from_evaluation(simulate(s));
    const QString path = m_dir.filePath(QStringLiteral("like.slrun"));
    save_run_file(simulated, path.toStdString());
    RunFile imported = simulated;  // as an import of dumps that carried settings_json
    imported.meta.scenario.reset();
    imported.meta.source = "imported";
    imported.meta.dataset = s.dataset;
    imported.meta.recorded =
        parse_recorded_settings(nlohmann::json{{"framework", "lightning"},
                                               {"sampler", "distributed"},
                                               {"shuffle", s.sampler.shuffle},
                                               {"seed", s.sampler.seed},
                                               {"sampler_epoch", 1},
                                               {"batch_size", s.loader.batch_size},
                                               {"limit_batches", s.loader.limit.to_string()},
                                               {"versions", {{"torch", "2.15.0"}}}}
                                    .dump(),
                                "test");
    const QString importedPath = m_dir.filePath(QStringLiteral("like_imported.slrun"));
    save_run_file(imported, importedPath.toStdString());
    MainWindow w;
    w.setErrorDialogs(false);
    showQuietly(w);
    QAction* action = w.findChild<QAction*>(QStringLiteral("simulateThisRun"));
    QVERIFY(action && !action->isEnabled());
    // A simulation is shown, not a run: nothing to simulate.
    QVERIFY(!comparison(
        w, [&](CompareController&) { action->trigger(); }, 500));
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.openRun(path);
    QVERIFY(shown.wait(30000));
    QVERIFY(action->isEnabled());
    CompareDialog* d = comparison(w, [&](CompareController&) { action->trigger(); });
    QVERIFY(d);
    QVERIFY2(d->comparison().equal && d->comparison().ranks_equal(), qPrintable(d->summary()));
    QCOMPARE(part<ScenarioPanel>(w)->scenario().sampler.seed, s.sampler.seed);

    w.openRun(importedPath);
    QVERIFY(shown.wait(30000));
    QVERIFY(
        part<RunBanner>(w)->detailsText().contains(QStringLiteral("Recorded settings: lightning")));
    {
      // No scenario recorded: the banner alone in the dock, at its top and whole (it sat
      // halfway down, its last lines cut).
      QVERIFY(!part<ScenarioPanel>(w)->isVisibleTo(&w));
      QTest::qWait(100);  // the layout after the banner's new text
      const RunBanner* banner = part<RunBanner>(w);
      QVERIFY2(banner->y() <= 2, qPrintable(QString::number(banner->y())));
      const int needed = banner->hasHeightForWidth() ? banner->heightForWidth(banner->width())
                                                     : banner->sizeHint().height();
      QVERIFY2(banner->height() >= needed,
               qPrintable(QStringLiteral("%1 < %2").arg(banner->height()).arg(needed)));
    }
    CompareDialog* again = comparison(w, [&](CompareController&) { action->trigger(); });
    QVERIFY(again);
    QVERIFY2(again->comparison().equal && again->comparison().ranks_equal(),
             qPrintable(again->summary()));
    QCOMPARE(part<ScenarioPanel>(w)->scenario().sampler.torch.to_string(), std::string("2.15"));
    QVERIFY(part<ScenarioPanel>(w)->isVisibleTo(&w));
    // A batch limit left samples unevaluated and no labels were given: the run's own records
    // are all that its simulation evaluates, so no predictor or dataset is asked for.
    Scenario cut = s;
    cut.loader.limit = BatchLimit::parse("2");
    RunFile limited = run_from_evaluation(simulate(cut));
    limited.meta.scenario.reset();
    limited.meta.source = "imported";
    limited.meta.dataset.clear();
    limited.meta.recorded =
        parse_recorded_settings(nlohmann::json{{"framework", "lightning"},
                                               {"sampler", "distributed"},
                                               {"shuffle", cut.sampler.shuffle},
                                               {"seed", cut.sampler.seed},
                                               {"sampler_epoch", 1},
                                               {"batch_size", cut.loader.batch_size},
                                               {"loader_drop_last", false},
                                               {"limit_batches", "2"},
                                               {"versions", {{"torch", "2.15.0"}}}}
                                    .dump(),
                                "test");
    const QString limitedPath = m_dir.filePath(QStringLiteral("like_limited.slrun"));
    save_run_file(limited, limitedPath.toStdString());
    w.openRun(limitedPath);
    QVERIFY(shown.wait(30000));
    CompareDialog* cutDialog = comparison(w, [&](CompareController&) { action->trigger(); });
    QVERIFY(cutDialog);
    QVERIFY2(cutDialog->comparison().equal && cutDialog->comparison().ranks_equal(),
             qPrintable(cutDialog->summary()));
    // Compare with… one evaluation of a run of two dataloaders, named by its label.
    std::vector<RunFile> loaders = {simulated, simulated};
    for (size_t k = 0; k < 2; ++k) loaders[k].meta.dataloader_idx = int64_t(k);
    const QString loadersPath = m_dir.filePath(QStringLiteral("loaders.slrun"));
    save_run_epochs(loaders, loadersPath.toStdString());
    CompareDialog* second =
        comparison(w, [&](CompareController& c) { c.compareWith(loadersPath, std::nullopt, 1); });
    QVERIFY(second);
    QVERIFY2(second->windowTitle().contains(QStringLiteral("epoch 1, dataloader 1")),
             qPrintable(second->windowTitle()));
  }

  // Compare with…: the run on screen beside another epoch of it, on one colour range.
  void compareWithAnotherEpoch() {
    Scenario s = load_scenario_file(SHARDLENS_LESSON_DIR "/seed-lesson.json");
    std::vector<RunFile> epochs;
    for (int e = 0; e < 2; ++e) {
      s.sampler.epoch = e;
      epochs.push_back(run_from_evaluation(simulate(s)));
    }
    const QString path = m_dir.filePath(QStringLiteral("two.slrun"));
    save_run_epochs(epochs, path.toStdString());
    MainWindow w;
    w.setErrorDialogs(false);
    showQuietly(w);
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.openRun(path);
    QVERIFY(shown.wait(30000));
    CompareDialog* d = comparison(w, [&](CompareController& c) { c.compareWith(path, 1); });
    QVERIFY(d);
    QVERIFY(!d->comparison().equal);
    QVERIFY(d->summary().contains(QStringLiteral("differ")));
    QCOMPARE(d->currentView()->data().valueMax, d->otherView()->data().valueMax);
    // Their colour bars say the range is one for both.
    const QString top = render::formatValue(d->currentView()->data().valueMax, true);
    QCOMPARE(d->currentView()->data().rangeNote, QStringLiteral("shared range 0–%1").arg(top));
    QCOMPARE(d->otherView()->data().rangeNote, QStringLiteral("shared range 0–%1").arg(top));
    QCOMPARE(d->differenceView()->data().classes, 10);
    QVERIFY(d->differenceView()->data().diverging);
    // Every differing cell is listed, one line each, with both counts and B - A (computed
    // here from the two epochs' own synced matrices).
    const Matrix& a = epochs[0].synced;
    const Matrix& b = epochs[1].synced;
    const QStringList cells = d->differingCells().split(QLatin1Char('\n'));
    QCOMPARE(cells.size(), int(d->comparison().cells_differing));
    int listed = 0;
    for (int32_t t = 0; t < a.classes; ++t)
      for (int32_t p = 0; p < a.classes; ++p)
        if (a.at(t, p) != b.at(t, p)) {
          const double delta = b.at(t, p) - a.at(t, p);
          QVERIFY2(cells[listed].endsWith(QStringLiteral("A %1, B %2 (B − A = %3)")
                                              .arg(a.at(t, p))
                                              .arg(b.at(t, p))
                                              .arg(delta > 0 ? QStringLiteral("+%1").arg(delta)
                                                             : QString::number(delta))),
                   qPrintable(cells[listed]));
          ++listed;
        }
    QCOMPARE(listed, cells.size());
    // Against itself: equal.
    CompareDialog* same = comparison(w, [&](CompareController& c) { c.compareWith(path, 0); });
    QVERIFY(same && same->comparison().equal);
    QCOMPARE(same->summary(), QStringLiteral("The reported matrices are equal."));
    QVERIFY(same->differingCells().isEmpty());
    // A file that is not a run: an error naming it, no dialog.
    const QString junkPath = m_dir.filePath(QStringLiteral("junk.slrun"));
    QVERIFY(test::writeTestFile(junkPath, "not a run"));
    QVERIFY(!comparison(w, [&](CompareController& c) { c.compareWith(junkPath); }));
    QVERIFY(w.lastError().contains(QStringLiteral("junk.slrun")));
  }

  // Import dumps…: the CLI's validation; a good import opens, a bad one says why and writes
  // nothing.
  void importDumpsFromTheDesktop() {
    MainWindow w;
    w.setErrorDialogs(false);
    showQuietly(w);
    const QString bad = m_dir.filePath(QStringLiteral("bad_rank0.csv"));
    QVERIFY(test::writeTestFile(bad, "rank,index,target,prediction\n0,1,x,0\n"));
    const QString out = m_dir.filePath(QStringLiteral("imported.slrun"));
    ImportController* import = part<ImportController>(w);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    import->importDumps({bad}, QString(), 0, out);
    QVERIFY(errors.wait(30000));
    QVERIFY(w.lastError().contains(QStringLiteral("bad_rank0.csv")));
    QVERIFY(!QFile::exists(out));
    const QString good = m_dir.filePath(QStringLiteral("good_rank0.csv"));
    QVERIFY(test::writeTestFile(good, "rank,index,target,prediction\n0,0,0,0\n0,1,1,1\n0,2,1,0\n"));
    QSignalSpy shown(&w, &MainWindow::resultShown);
    import->importDumps({good}, QString(), 2, out);
    QVERIFY(shown.wait(30000));
    QCOMPARE(w.result()->eval.meta.source, std::string("imported"));
    QCOMPARE(w.result()->eval.synced->total(), 3.0);
  }

  void runThatEvaluatedEverySampleShowsTheExpected() {
    RunFile run = paddingRun();
    run.expected.reset();
    run.meta.scenario.reset();  // as for an import of foreign dumps
    MainWindow w;
    QVERIFY(saveAndOpen(w, run, m_dir.filePath(QStringLiteral("all-seen.slrun"))));
    QVERIFY(w.lastError().isEmpty());
    QCOMPARE(part<MatrixPanel>(w)->expectedView()->data().classes, 10);
    QCOMPARE(part<MatrixPanel>(w)->differenceView()->data().classes, 10);
    QCOMPARE(part<MatrixPanel>(w)->syncedView()->data().mismatchCount(), 2);
    QVERIFY(diagnosisText(w).contains(QStringLiteral("padding-duplicates")));
    // No recorded scenario: no default settings pretending to be the run's.
    QVERIFY(part<RunBanner>(w)->isVisible());
    QVERIFY(!part<ScenarioPanel>(w)->isVisible());
  }

  void runWithoutExpectedSaysWhy() {
    RunFile run = paddingRun();
    run.expected.reset();
    run.meta.scenario.reset();
    run.records.ranks[0].pop_back();  // one sample never evaluated: its prediction is unknown
    run.per_rank = matrices_from_records(run.records, run.meta.classes, -1);
    run.synced = Matrix(run.meta.classes);
    for (const Matrix& m : run.per_rank) run.synced += m;
    MainWindow w;
    QVERIFY(saveAndOpen(w, run, m_dir.filePath(QStringLiteral("no-expected.slrun"))));
    QVERIFY(w.lastError().isEmpty());
    QCOMPARE(part<MatrixPanel>(w)->expectedView()->data().classes, 0);
    QVERIFY(part<MatrixPanel>(w)->expectedView()->data().emptyText.contains(
        QStringLiteral("1 of 510 samples were never evaluated")));
    QCOMPARE(part<MatrixPanel>(w)->differenceView()->data().classes, 0);
    // No expected matrix, no "rows ≠ expected" badge or row marks; the Metrics table says why
    // it holds no row instead of showing an empty table.
    QCOMPARE(part<MatrixPanel>(w)->syncedView()->data().mismatchCount(), 0);
    QVERIFY(!part<MatrixPanel>(w)->syncedView()->data().hasExpectedRows());
    MetricsPanel* metrics = w.findChild<MetricsPanel*>();
    QVERIFY(metrics);
    QCOMPARE(metrics->metricsModel()->rowCount(), 0);
    QVERIFY(metrics->emptyText().contains(QStringLiteral("expected matrix is unknown")));
  }

  // A run whose rank died before the sync (a real run's partial file) still opens: per-rank
  // views, the synced and difference views say why they are empty, and nothing is flagged.
  void incompleteRunOpensWithoutSync() {
    RunFile run = paddingRun();
    run.meta.complete = false;
    run.meta.incomplete_reason = "rank 1 failed: killed by signal 9";
    run.meta.failed_ranks = {1};
    run.records.ranks[1].clear();
    run.per_rank[1] = Matrix(run.meta.classes);
    run.synced = Matrix();
    run.expected.reset();
    MainWindow w;
    QVERIFY(saveAndOpen(w, run, m_dir.filePath(QStringLiteral("partial.slrun"))));
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    QVERIFY(w.showingRun());
    for (HeatmapView* v :
         {part<MatrixPanel>(w)->syncedView(), part<MatrixPanel>(w)->differenceView()}) {
      QCOMPARE(v->data().classes, 0);
      QVERIFY2(v->data().emptyText.contains(QStringLiteral("rank 1 failed")),
               qPrintable(v->data().emptyText));
      QCOMPARE(mismatchPixels(v), 0);
    }
    QCOMPARE(int(part<MatrixPanel>(w)->rankViews().size()), 4);
    QCOMPARE(part<MatrixPanel>(w)->rankViews()[0]->data().classes, run.meta.classes);
    QCOMPARE(part<MatrixPanel>(w)->rankViews()[1]->data().classes, 0);  // nothing arrived from it
    QCOMPARE(part<MatrixPanel>(w)->rankViews()[1]->data().title, QStringLiteral("Rank 1 (failed)"));
    QVERIFY(diagnosisText(w).contains(QStringLiteral("incomplete-run")));
    QVERIFY(w.findChild<QLabel*>(QStringLiteral("verdict"))->text().contains("Incomplete"));
    QVERIFY(part<RunBanner>(w)->text().contains(QStringLiteral("incomplete")));
  }

  void corruptFileKeepsTheView() {
    const QString garbage = m_dir.filePath(QStringLiteral("garbage.slrun"));
    {
      QFile f(garbage);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("this is not a zip archive");
    }
    const QString good = m_dir.filePath(QStringLiteral("good.slrun"));
    save_run_file(paddingRun(), good.toStdString());
    const QString truncated = m_dir.filePath(QStringLiteral("truncated.slrun"));
    {
      QFile in(good), out(truncated);
      QVERIFY(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
      out.write(in.readAll().left(int(in.size() / 2)));
    }
    MainWindow w;
    showQuietly(w);
    QSignalSpy shown(&w, &MainWindow::resultShown);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.setScenario(smallScenario());
    QVERIFY(shown.wait(30000));
    const ResultPtr before = w.result();
    for (const QString& bad : {garbage, truncated}) {
      w.openRun(bad);
      QVERIFY(errors.wait(30000));
      QVERIFY2(w.lastError().contains(QFileInfo(bad).fileName()), qPrintable(w.lastError()));
      QCOMPARE(w.result(), before);  // the simulation stays on screen
      QVERIFY(!w.showingRun());
      QVERIFY(part<ScenarioPanel>(w)->isEnabled());
    }
    // A bad file while a run is shown keeps that run.
    w.openRun(good);
    QVERIFY(shown.wait(30000));
    const ResultPtr run = w.result();
    w.openRun(garbage);
    QVERIFY(errors.wait(30000));
    QCOMPARE(w.result(), run);
    QVERIFY(w.showingRun());
    QVERIFY(part<RunBanner>(w)->text().contains(QStringLiteral("good.slrun")));
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestRunFile)
#include "test_run_file.moc"

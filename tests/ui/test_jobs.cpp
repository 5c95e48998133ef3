// The one job runner's tasks and what runs on it, alone: a task cancelled by its owner says
// so while the others go on, Cancel stops every task but the owned ones, a task whose owner is
// gone delivers nothing; a real run's simulation (after the ranks, here a stand-in CLI) is an
// owned task of the runner, not a thread of its own: the job's Cancel stops it, the main
// window's Cancel does not.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <memory>

#include "core/dataset/dataset_spec.h"
#include "core/realrun/model_predictions.h"
#include "core/sim/engine.h"
#include "core/sim/specs.h"
#include "core/vocabulary/types.h"
#include "shardlens/config.h"
#include "tests/ui/ui_test_util.h"
#include "ui/jobs/evaluation_runner.h"
#include "ui/jobs/real_run_job.h"

using namespace shardlens;
using namespace shardlens::ui;

namespace {

// What reached a task's callbacks.
struct Ended {
  int done = 0;
  int failed = 0;
  int cancelled = 0;
  int total() const { return done + failed + cancelled; }
};

// A task that runs until cancelled, or returns 1 once `release` is set; `owned`: one that
// only cancelTask() cancels (startOwnedTask).
quint64 startWaiting(EvaluationRunner& runner, QObject* context, Ended& ended,
                     std::shared_ptr<std::atomic<bool>> release, bool owned = false) {
  auto work = [release](JobProgress* progress) {
    while (!release->load()) {
      if (progress->cancelled()) throw Cancelled();
      QThread::msleep(2);
    }
    return 1;
  };
  auto done = [&ended](int) { ++ended.done; };
  auto failed = [&ended](const QString&) { ++ended.failed; };
  auto cancelled = [&ended] { ++ended.cancelled; };
  const QString stage = QStringLiteral("waiting");
  return owned ? runner.startOwnedTask(context, stage, work, done, failed, cancelled)
               : runner.startTask(context, stage, work, done, failed, cancelled);
}

// Ranks that report progress and end at once: a shell script in `dir` standing in for
// shardlens-cli (SHARDLENS_CLI); empty when it could not be written.
QString standInCli(const QTemporaryDir& dir) {
  const QString cli = dir.filePath(QStringLiteral("fake-cli"));
  const bool written = test::writeTestFile(cli,
                                           "#!/bin/sh\n"
                                           "echo 'shardlens-progress 0 0.5 evaluating' >&2\n"
                                           "echo 'shardlens-progress 1 1 done' >&2\n"
                                           "exit 0\n");
  if (!written ||
      !QFile::setPermissions(cli, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner))
    return {};
  return cli;
}

}  // namespace

class TestJobs : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    const QString cli = standInCli(m_dir);
    QVERIFY(!cli.isEmpty());
    qputenv("SHARDLENS_CLI", cli.toUtf8());
    // Predictions of the `model:` predictor are made here, never read from a shared cache.
    qputenv("SHARDLENS_PREDICTION_CACHE", m_dir.filePath(QStringLiteral("cache")).toUtf8());
    install_model_predictor();
  }

  void aTaskCancelledAloneSaysSoAndTheOthersGoOn() {
    EvaluationRunner runner;
    QObject owner;
    auto release = std::make_shared<std::atomic<bool>>(false);
    Ended first, second;
    const quint64 task = startWaiting(runner, &owner, first, release);
    startWaiting(runner, &owner, second, release);
    QCOMPARE(runner.tasksRunning(), 2);
    runner.cancelTask(task);
    QTRY_COMPARE(first.cancelled, 1);
    QCOMPARE(first.total(), 1);
    QCOMPARE(runner.tasksRunning(), 1);
    release->store(true);
    QTRY_COMPARE(second.done, 1);
    QCOMPARE(second.total(), 1);
    runner.cancelTask(task);  // an ended task: nothing to cancel
    QCOMPARE(runner.tasksRunning(), 0);
  }

  void cancelStopsEveryTask() {
    EvaluationRunner runner;
    QObject owner;
    auto release = std::make_shared<std::atomic<bool>>(false);
    Ended a, b;
    startWaiting(runner, &owner, a, release);
    startWaiting(runner, &owner, b, release);
    runner.cancel();
    runner.waitIdle();
    QCOMPARE(a.cancelled, 1);
    QCOMPARE(b.cancelled, 1);
    QCOMPARE(a.total() + b.total(), 2);
  }

  void cancelLeavesOwnedTasks() {
    EvaluationRunner runner;
    QObject owner;
    auto release = std::make_shared<std::atomic<bool>>(false);
    Ended plain, owned;
    startWaiting(runner, &owner, plain, release);
    const quint64 task = startWaiting(runner, &owner, owned, release, true);
    runner.cancel();
    QTRY_COMPARE(plain.cancelled, 1);
    QCOMPARE(runner.tasksRunning(), 1);
    QCOMPARE(owned.total(), 0);
    runner.cancelTask(task);
    QTRY_COMPARE(owned.cancelled, 1);
    QCOMPARE(plain.total() + owned.total(), 2);
    QCOMPARE(runner.tasksRunning(), 0);
  }

  void aTaskWhoseOwnerIsGoneDeliversNothing() {
    EvaluationRunner runner;
    auto owner = std::make_unique<QObject>();
    auto release = std::make_shared<std::atomic<bool>>(false);
    Ended ended;
    QSignalSpy taskEnded(&runner, &EvaluationRunner::taskEnded);
    startWaiting(runner, owner.get(), ended, release);
    owner.reset();
    release->store(true);
    QVERIFY(taskEnded.wait(10000));
    QCOMPARE(ended.total(), 0);
  }

  // The ranks are a stand-in CLI that reports progress and ends; the simulation of the same
  // settings with the `model:` predictor then runs as a task of the runner (and fails here:
  // the model file does not exist), and its failure is the job's.
  void aRealRunsSimulationIsATaskOfTheRunner() {
    EvaluationRunner runner;
    RealRunJob job(&runner);
    QSignalSpy tasks(&runner, &EvaluationRunner::taskStarted);
    QSignalSpy progress(&job, &RealRunJob::rankProgress);
    QSignalSpy finished(&job, &RealRunJob::finished);
    RealRunRequest request;
    request.scenario = test::syntheticScenario("real-run-job", 4, 10, 2, 4);
    request.model = m_dir.filePath(QStringLiteral("missing.pt"));
    request.out = m_dir.filePath(QStringLiteral("run.slrun"));
    job.start(request);
    QVERIFY(job.running());
    QVERIFY(finished.wait(60000));
    QCOMPARE(tasks.size(), 1);
    QCOMPARE(tasks.front().at(1).toString(),
             QStringLiteral("Simulating the real run's settings with the model"));
    QCOMPARE(progress.size(), 2);
    QCOMPARE(progress.front().at(0).toInt(), 0);
    QCOMPARE(progress.front().at(1).toString(), QStringLiteral("evaluating"));
    QCOMPARE(progress.front().at(2).toDouble(), 0.5);
    QCOMPARE(int(job.outcome()), int(RealRunJob::Outcome::Incomplete));
    QVERIFY2(job.error().startsWith(
                 QStringLiteral("The run finished, but simulating it with the model failed: ")),
             qPrintable(job.error()));
    QVERIFY(!job.simulation());
    QVERIFY(!job.running());
    QCOMPARE(runner.tasksRunning(), 0);
  }

  // Run > Cancel in the main window (the runner's cancel()) as a real run's simulation starts:
  // the real run is its dialog's, so it goes on and ends as it would have without it (here
  // the simulation fails, the model file does not exist), not Cancelled.
  void theWindowsCancelLeavesARealRunsSimulation() {
    EvaluationRunner runner;
    RealRunJob job(&runner);
    QSignalSpy finished(&job, &RealRunJob::finished);
    int windowCancels = 0;
    connect(&runner, &EvaluationRunner::taskStarted, &runner, [&runner, &windowCancels] {
      runner.cancel();
      ++windowCancels;
    });
    RealRunRequest request;
    request.scenario = test::syntheticScenario("real-run-window-cancel", 4, 10, 2, 4);
    request.model = m_dir.filePath(QStringLiteral("missing.pt"));
    request.out = m_dir.filePath(QStringLiteral("window-cancel.slrun"));
    job.start(request);
    QVERIFY(finished.wait(60000));
    QCOMPARE(windowCancels, 1);
    QCOMPARE(int(job.outcome()), int(RealRunJob::Outcome::Incomplete));
    QVERIFY2(job.error().startsWith(
                 QStringLiteral("The run finished, but simulating it with the model failed: ")),
             qPrintable(job.error()));
    QVERIFY(job.runComplete());
    QVERIFY(!job.running());
    QCOMPARE(runner.tasksRunning(), 0);
  }

  // The job's Cancel as its simulation starts: Cancelled, and the ranks' run is known to be
  // complete (the controller opens it as the complete run, never as what arrived).
  void aCancelledSimulationKeepsTheRunComplete() {
    EvaluationRunner runner;
    RealRunJob job(&runner);
    QSignalSpy finished(&job, &RealRunJob::finished);
    // Queued: taskStarted comes before the job knows its task; the worker's end comes after.
    connect(
        &runner, &EvaluationRunner::taskStarted, &job, [&job] { job.cancel(); },
        Qt::QueuedConnection);
    RealRunRequest request;
    request.scenario = test::syntheticScenario("real-run-dialog-cancel", 4, 10, 2, 4);
    request.model = m_dir.filePath(QStringLiteral("missing.pt"));
    request.out = m_dir.filePath(QStringLiteral("dialog-cancel.slrun"));
    job.start(request);
    QVERIFY(finished.wait(60000));
    QCOMPARE(int(job.outcome()), int(RealRunJob::Outcome::Cancelled));
    QVERIFY(job.runComplete());
    QVERIFY(!job.simulation());
    QVERIFY(!job.running());
    QCOMPARE(runner.tasksRunning(), 0);
  }

  // The job's Cancel while the model predicts the whole Fashion-MNIST test set for the
  // simulation: the runner's task stops, the job ends Cancelled with no simulation.
  void aRealRunsSimulationCancels() {
    if (!SHARDLENS_HAS_TORCH) QSKIP("this build has no LibTorch: no model predictions");
    if (!QFile::exists(QString::fromStdString(fashion_mnist_dir()) +
                       QStringLiteral("/t10k-images-idx3-ubyte.gz")))
      QSKIP("Debian's dataset-fashion-mnist is not installed");
    EvaluationRunner runner;
    RealRunJob job(&runner);
    QSignalSpy tasks(&runner, &EvaluationRunner::taskStarted);
    QSignalSpy finished(&job, &RealRunJob::finished);
    RealRunRequest request;
    request.scenario = test::syntheticScenario("real-run-cancel", 10, 1, 2, 16);
    request.scenario.dataset = "fashion-mnist:test";
    request.model = QString::fromStdString(reference_model_path());
    request.out = m_dir.filePath(QStringLiteral("cancelled.slrun"));
    job.start(request);
    QVERIFY(tasks.wait(60000));
    job.cancel();
    QVERIFY(finished.wait(60000));
    QCOMPARE(int(job.outcome()), int(RealRunJob::Outcome::Cancelled));
    QVERIFY(!job.simulation());
    QVERIFY(!job.running());
    QTRY_COMPARE(runner.tasksRunning(), 0);
  }

  // A setting change takes over what it leaves unchanged from the simulation still shown
  // (the plan, the counts, the shard summary), and only while it is shown; the matrices are
  // a simulation's from scratch either way.
  void aToggleReusesTheResultShownOnlyWhileItIsShown() {
    EvaluationRunner runner;
    QSignalSpy finished(&runner, &EvaluationRunner::finished);
    const auto run = [&](const Scenario& s) {
      finished.clear();
      runner.start(s);
      return finished.wait(60000) ? finished.takeFirst().at(0).value<ResultPtr>() : ResultPtr();
    };
    Scenario s = test::syntheticScenario("toggles", 5, 41, 3, 8);
    s.sampler.shuffle = true;
    const ResultPtr shown = run(s);
    QVERIFY(shown);
    s.sync = SyncStrategy::Double;
    ResultPtr next = run(s);
    QVERIFY(next);
    QCOMPARE(next->eval.plan, shown->eval.plan);
    QCOMPARE(next->shards.neverTotal, shown->shards.neverTotal);
    const Evaluation fresh = simulate(s);
    QVERIFY(next->eval.per_rank == fresh.per_rank);
    QVERIFY(next->eval.synced == fresh.synced);
    QVERIFY(next->eval.synced != shown->eval.synced);  // summed twice
    // Nothing shows the last result any more: the next toggle draws its plan anew.
    const std::shared_ptr<const ShardPlan> plan = next->eval.plan;
    const std::weak_ptr<const EvaluationResult> gone = next;
    next.reset();
    QTRY_VERIFY(gone.expired());  // the worker's own reference ends with its thread's task
    s.dtype = CounterDtype::Float32;
    const ResultPtr third = run(s);
    QVERIFY(third);
    QVERIFY(third->eval.plan != plan);
    QVERIFY(third->eval.per_rank == simulate(s).per_rank);
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestJobs)
#include "test_jobs.moc"

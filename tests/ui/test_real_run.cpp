// Run > Run for real… end to end, offscreen: two gloo ranks of shardlens-cli on 300
// Fashion-MNIST test images with the reference model finish, the run opens, and its
// comparison with the simulation of the same settings under the `model:` predictor says the
// matrices are equal; Cancel mid-run keeps an incomplete run and leaves no rank process
// behind; refused requests (a dataset without inputs, a missing model) say why.
#include <signal.h>

#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cerrno>
#include <optional>

#include "core/runfile/runfile.h"
#include "core/sim/specs.h"
#include "shardlens/config.h"
#include "tests/ui/ui_test_util.h"
#include "ui/controllers/real_run_controller.h"
#include "ui/dialogs/compare_dialog.h"
#include "ui/dialogs/real_run_dialog.h"
#include "ui/main_window.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::part;
using shardlens::ui::test::showQuietly;

namespace {

// The processes whose parent is `pid` (from /proc/<child>/stat's fourth field).
QList<qint64> childrenOf(qint64 pid) {
  QList<qint64> out;
  for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
    bool ok = false;
    const qint64 child = entry.toLongLong(&ok);
    if (!ok) continue;
    QFile stat(QStringLiteral("/proc/%1/stat").arg(child));
    if (!stat.open(QIODevice::ReadOnly)) continue;
    const QByteArray text = stat.readAll();
    const qsizetype close = text.lastIndexOf(')');  // the command may hold spaces
    const QList<QByteArray> fields = text.mid(close + 2).split(' ');
    if (fields.size() > 1 && fields[1].toLongLong() == pid) out << child;
  }
  return out;
}

bool alive(qint64 pid) {
  if (::kill(pid_t(pid), 0) != 0) return errno != ESRCH;
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return false;
  const QByteArray text = stat.readAll();
  return text.mid(text.lastIndexOf(')') + 2, 1) != "Z";  // a zombie has ended
}

Scenario fashionScenario(const std::string& dataset, int64_t batch) {
  Scenario s;
  s.name = "real-run-test";
  s.dataset = dataset;
  s.predictor = "model:reference";
  s.sampler.world_size = 2;
  s.sampler.kind = SamplerKind::Distributed;
  s.sampler.shuffle = true;
  s.loader.batch_size = batch;
  return s;
}

}  // namespace

class TestRealRun : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    if (!SHARDLENS_HAS_TORCH) QSKIP("this build has no LibTorch: real runs cannot start");
    if (!QFile::exists(QString::fromStdString(fashion_mnist_dir()) +
                       QStringLiteral("/t10k-images-idx3-ubyte.gz")))
      QSKIP("Debian's dataset-fashion-mnist is not installed");
    QVERIFY(m_dir.isValid());
    // This build's CLI runs the ranks; the predictions cache starts empty.
    qputenv("SHARDLENS_CLI", SHARDLENS_TEST_CLI);
    qputenv("SHARDLENS_PREDICTION_CACHE", m_dir.filePath(QStringLiteral("cache")).toUtf8());
  }

  void runForRealMatchesSimulation() {
    MainWindow w;
    showQuietly(w);
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.setScenario(fashionScenario("fashion-mnist:test,first=300", 16));
    QVERIFY(shown.wait(120000));  // the model: predictor computes and caches predictions
    RealRunDialog* dialog = part<RealRunController>(w)->showDialog(w.scenario());
    QVERIFY(dialog);
    QCOMPARE(dialog->modelEdit()->text(), QString::fromStdString(reference_model_path()));
    const QString out = m_dir.filePath(QStringLiteral("real.slrun"));
    dialog->outEdit()->setText(out);
    dialog->startRun();
    QCOMPARE(dialog->rankBars().size(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(part<RealRunController>(w)->comparison() != nullptr, 180000);
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    QVERIFY(w.showingRun());
    QVERIFY(w.result()->eval.meta.complete);
    QCOMPARE(w.result()->eval.meta.world_size, 2);
    CompareDialog* compare = part<RealRunController>(w)->comparison();
    QVERIFY2(compare->comparison().equal, qPrintable(compare->summary()));
    QCOMPARE(compare->summary(), QStringLiteral("The reported matrices are equal."));
    QVERIFY(compare->differingCells().isEmpty());
    // The run file is the one written, with the model as its predictor.
    const RunFile run = load_run_file(out.toStdString());
    QVERIFY(run.meta.complete);
    QCOMPARE(run.meta.scenario->dataset, std::string("fashion-mnist:test,first=300"));
  }

  // The model: predictor in the predictor box reports its progress and cancels like any
  // job: Esc while predicting stops it and caches nothing.
  void predictingCancels() {
    const QByteArray cache = m_dir.filePath(QStringLiteral("cache-cancel")).toUtf8();
    const QByteArray shared = qgetenv("SHARDLENS_PREDICTION_CACHE");
    qputenv("SHARDLENS_PREDICTION_CACHE", cache);
    MainWindow w;
    showQuietly(w);
    QSignalSpy cancelled(part<EvaluationRunner>(w), &EvaluationRunner::cancelled);
    bool predicting = false;
    connect(part<EvaluationRunner>(w), &EvaluationRunner::progress, this,
            [&](quint64, const QString& stage, double) {
              if (predicting || stage != QLatin1String("predicting")) return;
              predicting = true;
              part<EvaluationRunner>(w)->cancel();
            });
    w.setScenario(fashionScenario("fashion-mnist:test", 16));
    QVERIFY(cancelled.wait(120000));
    QVERIFY(predicting);
    QVERIFY(QDir(QString::fromUtf8(cache)).entryList(QDir::Files).isEmpty());
    qputenv("SHARDLENS_PREDICTION_CACHE", shared);
  }

  void cancelKeepsIncompleteRunAndNoOrphans() {
    MainWindow w;
    showQuietly(w);
    // The whole test set in batches of 4: long enough to cancel in the middle.
    Scenario s = fashionScenario("fashion-mnist:test", 4);
    s.predictor = "perfect";  // the simulation on screen does not matter here
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.setScenario(s);
    QVERIFY(shown.wait(60000));
    RealRunDialog* dialog = part<RealRunController>(w)->showDialog(w.scenario());
    const QString out = m_dir.filePath(QStringLiteral("cancelled.slrun"));
    dialog->outEdit()->setText(out);
    // The dialog closes (and goes) once the cancelled job has ended: read the job then.
    std::optional<RealRunJob::Outcome> outcome;
    connect(dialog, &RealRunDialog::jobFinished, this,
            [&](RealRunJob* job) { outcome = job->outcome(); });
    dialog->startRun();
    // Mid-run: a rank has evaluated some batches.
    QTRY_VERIFY_WITH_TIMEOUT(
        dialog->rankBars().at(0)->value() > 0 || dialog->rankBars().at(1)->value() > 0, 120000);
    const qint64 launcher = dialog->job()->launcherPid();
    QVERIFY(launcher > 0);
    const QList<qint64> ranks = childrenOf(launcher);
    QCOMPARE(ranks.size(), 2);
    dialog->cancelButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 60000);
    QCOMPARE(int(*outcome), int(RealRunJob::Outcome::Cancelled));
    QVERIFY(!alive(launcher));
    for (qint64 rank : ranks) QVERIFY2(!alive(rank), qPrintable(QString::number(rank)));
    // What arrived is kept, marked incomplete, and shown.
    QVERIFY(QFile::exists(out));
    const RunFile run = load_run_file(out.toStdString());
    QVERIFY(!run.meta.complete);
    QVERIFY2(QString::fromStdString(run.meta.incomplete_reason).contains(QStringLiteral("cancel")),
             run.meta.incomplete_reason.c_str());
    QTRY_VERIFY_WITH_TIMEOUT(w.showingRun(), 30000);
    QVERIFY(!w.result()->eval.meta.complete);
  }

  void aRankThatDiesIsNamedAndItsPartialRunOpened() {
    MainWindow w;
    showQuietly(w);
    Scenario s = fashionScenario("fashion-mnist:test,first=300", 16);
    s.predictor = "perfect";
    w.setScenario(s);
    RealRunDialog* dialog = part<RealRunController>(w)->showDialog(w.scenario());
    const QString out = m_dir.filePath(QStringLiteral("died.slrun"));
    dialog->outEdit()->setText(out);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    qputenv("SHARDLENS_TEST_FAULT", "kill:1:2");  // rank 1 dies after two batches
    dialog->startRun();
    qunsetenv("SHARDLENS_TEST_FAULT");  // the process has its environment already
    QVERIFY(errors.wait(180000));
    QVERIFY2(w.lastError().contains(QStringLiteral("rank 1")), qPrintable(w.lastError()));
    QVERIFY2(w.lastError().contains(QStringLiteral("died.slrun")), qPrintable(w.lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(w.showingRun(), 30000);
    QVERIFY(!w.result()->eval.meta.complete);
  }

  void refusesDatasetsWithoutInputs() {
    MainWindow w;
    showQuietly(w);
    Scenario s = fashionScenario("synthetic:classes=10,per-class=50", 16);
    s.predictor = "perfect";
    w.setScenario(s);
    RealRunDialog* dialog = part<RealRunController>(w)->showDialog(w.scenario());
    QSignalSpy refused(dialog, &RealRunDialog::refused);
    dialog->startRun();
    QCOMPARE(refused.size(), 1);
    QVERIFY2(w.lastError().contains(QStringLiteral("no inputs")), qPrintable(w.lastError()));
    QVERIFY(!dialog->job()->running());
    // A model file that does not exist is named.
    w.setScenario(fashionScenario("fashion-mnist:test,first=300", 16));
    QCOMPARE(part<RealRunController>(w)->showDialog(w.scenario()),
             dialog);  // the same dialog, with the new settings
    dialog->modelEdit()->setText(m_dir.filePath(QStringLiteral("missing.pt")));
    dialog->startRun();
    QCOMPARE(refused.size(), 2);
    QVERIFY2(w.lastError().contains(QStringLiteral("missing.pt")), qPrintable(w.lastError()));
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestRealRun)
#include "test_real_run.moc"

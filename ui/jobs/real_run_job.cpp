#include "ui/jobs/real_run_job.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QStandardPaths>
#include <QTimer>

#include "core/dataset/dataset_images.h"
#include "core/realrun/real_run.h"
#include "core/realrun/torch_plugin.h"
#include "core/sim/engine.h"
#include "core/sim/specs.h"
#include "shardlens/config.h"
#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

namespace {

// How long the ranks get to end after Cancel before the launcher is killed outright (the
// launcher itself terminates them, and kills them after kCancelGrace).
constexpr int kCancelKillMs = 15000;

}  // namespace

QString realRunBuildRefusal() {
  std::string why_not;
  if (!torch_plugin(&why_not)) {
    // The plugin's own words say what is missing and how to get it, once ("this build of
    // ShardLens has no LibTorch support (...)"): only capitalised into a sentence here.
    QString why = QString::fromStdString(why_not);
    if (!why.isEmpty()) why[0] = why[0].toUpper();
    return why + QLatin1Char('.');
  }
  return {};
}

QString realRunRefusal(const RealRunRequest& r) {
  if (QString why = realRunBuildRefusal(); !why.isEmpty()) return why;
  try {
    if (!dataset_has_inputs(r.scenario.dataset)) {
      return QCoreApplication::translate(
                 "RealRun",
                 "The dataset %1 has labels but no inputs: %2 labels cannot be fed to a "
                 "model.\n\nChoose fashion-mnist:test (or :train), or idx:PATH with its "
                 "images file next to the labels, in the scenario panel.")
          .arg(QString::fromStdString(r.scenario.dataset),
               QString::fromStdString(parse_spec(r.scenario.dataset, "--dataset").kind));
    }
    dataset_images_path(r.scenario.dataset);
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  if (!QFileInfo(r.model).isFile()) {
    return QCoreApplication::translate("RealRun",
                                       "The model file %1 does not exist.\n\nChoose a "
                                       "TorchScript model (torch.jit.save).")
        .arg(r.model);
  }
  if (r.backend == QLatin1String("nccl") && !ncclAvailable()) {
    return QCoreApplication::translate("RealRun",
                                       "The nccl backend needs a CUDA build and an NVIDIA "
                                       "GPU; use gloo.");
  }
  if (!QFileInfo(cliPath()).isExecutable()) {
    return QCoreApplication::translate("RealRun",
                                       "shardlens-cli, which runs the ranks, was not found at "
                                       "%1.\n\nInstall it next to shardlens, or set "
                                       "SHARDLENS_CLI to its path.")
        .arg(cliPath());
  }
  return {};
}

bool ncclAvailable() {
  if (!SHARDLENS_HAS_CUDA) return false;
  return !QDir(QStringLiteral("/proc/driver/nvidia/gpus"))
              .entryList(QDir::Dirs | QDir::NoDotAndDotDot)
              .isEmpty();
}

QString cliPath() {
  const QString env = qEnvironmentVariable("SHARDLENS_CLI");
  if (!env.isEmpty()) return env;
  const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/shardlens-cli");
  if (QFileInfo(beside).isExecutable()) return beside;
  return QStringLiteral(SHARDLENS_CLI_BUILD_PATH);
}

QString defaultRunPath(const Scenario& s) {
  const QString dir =
      QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/runs");
  const QString name = s.name.empty() ? QStringLiteral("run") : QString::fromStdString(s.name);
  return dir + QLatin1Char('/') + name + QLatin1Char('-') +
         QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")) +
         QStringLiteral(".slrun");
}

RealRunJob::RealRunJob(EvaluationRunner* runner, QObject* parent)
    : QObject(parent), m_runner(runner) {}

RealRunJob::~RealRunJob() {
  if (m_process && m_process->state() != QProcess::NotRunning) {
    m_process->disconnect(this);
    cancel();
    if (!m_process->waitForFinished(kCancelKillMs)) {
      m_process->kill();
      m_process->waitForFinished(2000);
    }
  }
  // The simulation's callbacks go with this job (their context is its child); the runner
  // stops the worker.
  if (m_simTask && m_runner) m_runner->cancelTask(m_simTask);
}

bool RealRunJob::running() const {
  return (m_process && m_process->state() != QProcess::NotRunning) || m_simTask != 0;
}

qint64 RealRunJob::launcherPid() const {
  return m_process && m_process->state() != QProcess::NotRunning ? m_process->processId() : 0;
}

bool RealRunJob::runWritten() const {
  return QFileInfo(m_request.out).isFile();
}

void RealRunJob::start(const RealRunRequest& request) {
  m_request = request;
  m_request.scenario.predictor = "model:" + request.model.toStdString();
  m_messages.clear();
  m_pending.clear();
  m_cancelling = false;
  m_runComplete = false;
  m_error.clear();
  m_simulation.reset();
  m_dir = std::make_unique<QTemporaryDir>();
  const QString scenarioFile = m_dir->filePath(QStringLiteral("scenario.json"));
  try {
    save_scenario_file(m_request.scenario, scenarioFile.toStdString());
    QDir().mkpath(QFileInfo(m_request.out).absolutePath());
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    QTimer::singleShot(0, this, [this] { finish(Outcome::Failed); });
    return;
  }
  QFile::remove(m_request.out);  // so runWritten() tells what this run wrote
  delete m_process;
  m_process = new QProcess(this);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("SHARDLENS_PROGRESS"), QStringLiteral("lines"));
  m_process->setProcessEnvironment(env);
  m_process->setStandardOutputFile(QProcess::nullDevice());  // the report; the GUI reads the file
  connect(m_process, &QProcess::readyReadStandardError, this, &RealRunJob::readProgress);
  connect(m_process, &QProcess::finished, this, &RealRunJob::processEnded);
  connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    m_error = tr("Could not start %1 (%2).").arg(cliPath(), m_process->errorString());
    finish(Outcome::Failed);
  });
  emit stage(tr("Starting %1 rank(s)…").arg(m_request.scenario.sampler.world_size));
  m_process->start(cliPath(),
                   {QStringLiteral("run"), QStringLiteral("--preset"), scenarioFile,
                    QStringLiteral("--model"), m_request.model, QStringLiteral("--backend"),
                    m_request.backend, QStringLiteral("--out"), m_request.out});
}

void RealRunJob::cancel() {
  if (m_process && m_process->state() != QProcess::NotRunning) {
    if (m_cancelling) return;
    m_cancelling = true;
    emit stage(tr("Cancelling: stopping the ranks…"));
    m_process->terminate();  // the launcher stops its ranks and writes what arrived
    QPointer<QProcess> process = m_process;
    QTimer::singleShot(kCancelKillMs, this, [process] {
      if (process && process->state() != QProcess::NotRunning) process->kill();
    });
  } else if (m_simTask && m_runner) {
    m_runner->cancelTask(m_simTask);  // Cancelled once the worker has stopped
  }
}

void RealRunJob::readProgress() {
  m_pending += m_process->readAllStandardError();
  for (qsizetype end = m_pending.indexOf('\n'); end >= 0; end = m_pending.indexOf('\n')) {
    const QString line = QString::fromUtf8(m_pending.left(end)).trimmed();
    m_pending.remove(0, end + 1);
    static const QString kTag = QStringLiteral("shardlens-progress ");
    if (line.startsWith(kTag)) {
      const QStringList parts = line.mid(kTag.size()).split(QLatin1Char(' '));
      if (parts.size() >= 3)
        emit rankProgress(parts[0].toInt(), parts.mid(2).join(QLatin1Char(' ')),
                          parts[1].toDouble());
    } else if (!line.isEmpty()) {
      m_messages << line;
    }
  }
}

void RealRunJob::processEnded(int exitCode, QProcess::ExitStatus status) {
  readProgress();
  if (!m_pending.trimmed().isEmpty()) m_messages << QString::fromUtf8(m_pending).trimmed();
  m_pending.clear();
  QStringList errors;
  for (QString m : m_messages) {
    if (m.startsWith(QLatin1String("wrote "))) continue;
    if (m.startsWith(QLatin1String("shardlens-cli: "))) m = m.mid(15);
    errors << m;
  }
  m_error = errors.join(QLatin1Char('\n'));
  if (m_cancelling) return finish(Outcome::Cancelled);
  if (status == QProcess::CrashExit) {
    if (m_error.isEmpty()) m_error = tr("shardlens-cli crashed.");
    return finish(runWritten() ? Outcome::Incomplete : Outcome::Failed);
  }
  if (exitCode != 0) return finish(runWritten() ? Outcome::Incomplete : Outcome::Failed);
  m_runComplete = true;
  simulate();
}

void RealRunJob::simulate() {
  emit stage(tr("Simulating the same settings with the model's predictions…"));
  if (!m_runner) {  // the window and its runner are being torn down
    m_error = tr("The run finished, but the window closed before simulating it.");
    return finish(Outcome::Incomplete);
  }
  if (m_simTask) m_runner->cancelTask(m_simTask);
  delete m_simContext;  // a simulation still running is dropped: the latest one wins
  m_simContext = new QObject(this);
  // Owned: the main window's Cancel is for its views, and this job's Cancel is the dialog's.
  m_simTask = m_runner->startOwnedTask(
      m_simContext, tr("Simulating the real run's settings with the model"),
      [scenario = m_request.scenario](JobProgress* progress) {
        return std::make_shared<const Evaluation>(shardlens::simulate(scenario, progress));
      },
      [this](std::shared_ptr<const Evaluation> simulation) {
        m_simulation = std::move(simulation);
        simulationEnded(Outcome::Complete);
      },
      [this](const QString& error) {
        m_error = tr("The run finished, but simulating it with the model failed: %1").arg(error);
        simulationEnded(Outcome::Incomplete);
      },
      [this] { simulationEnded(Outcome::Cancelled); });
}

void RealRunJob::simulationEnded(Outcome outcome) {
  m_simTask = 0;
  finish(outcome);
}

void RealRunJob::finish(Outcome outcome) {
  m_outcome = outcome;
  emit finished();
}

}  // namespace shardlens::ui

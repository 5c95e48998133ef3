#pragma once
// Run > Run for real…: the scenario on screen evaluated by real rank processes. The engine is
// `shardlens-cli run` (core/realrun/rank_launcher.h), started as a child process so the ranks
// are its children, never the GUI's: it reports each rank's progress as lines on stderr
// (SHARDLENS_PROGRESS=lines), and SIGTERM cancels it, the ranks end and what arrived is
// written as an incomplete run. Then the same settings are simulated with the `model:`
// predictor, for the comparison: a task of the one job runner, like every computation, owned
// by this job: only its Cancel (the dialog's) stops it, not the main window's.
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>
#include <optional>

#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"

namespace shardlens::ui {

class EvaluationRunner;

struct RealRunRequest {
  Scenario scenario;  // the scenario panel's settings (its predictor is replaced by the model)
  QString model;      // TorchScript file
  QString backend = QStringLiteral("gloo");
  QString out;  // the run file to write
};

// Why this build cannot run models at all (no LibTorch plugin), or empty: the dialog says so
// when it opens and keeps Run disabled.
QString realRunBuildRefusal();
// Why a request cannot start (the dialog says so before anything runs), or empty: no
// LibTorch plugin, a dataset without inputs, a model file that is missing.
QString realRunRefusal(const RealRunRequest& request);
// Whether `nccl` is offered: a CUDA build on a machine with an NVIDIA GPU.
bool ncclAvailable();
// shardlens-cli: $SHARDLENS_CLI, else next to this executable, else this build's.
QString cliPath();
// Where Run for real saves its runs by default (the app's data dir, runs/).
QString defaultRunPath(const Scenario& s);

class RealRunJob : public QObject {
  Q_OBJECT
 public:
  // The simulation after the ranks runs on `runner`.
  explicit RealRunJob(EvaluationRunner* runner, QObject* parent = nullptr);
  // A job still running is cancelled: its ranks are waited for, its simulation is dropped.
  ~RealRunJob() override;

  enum class Outcome { Complete, Incomplete, Cancelled, Failed };

  void start(const RealRunRequest& request);
  void cancel();
  bool running() const;
  qint64 launcherPid() const;  // 0 when not running
  const RealRunRequest& request() const { return m_request; }
  Outcome outcome() const { return m_outcome; }
  // The CLI's message when the run failed, was cancelled or a rank died.
  const QString& error() const { return m_error; }
  bool runWritten() const;  // the run file exists (complete or not)
  // The ranks ended and wrote a complete run; a Cancel after that (Cancelled) only stopped
  // the simulation, so the run file is whole, not what arrived.
  bool runComplete() const { return m_runComplete; }
  // The simulation of the same settings with the model predictor (after Complete).
  const std::shared_ptr<const Evaluation>& simulation() const { return m_simulation; }

 signals:
  void rankProgress(int rank, const QString& stage, double fraction);
  void stage(const QString& text);  // what the job does now
  void finished();

 private:
  void readProgress();
  void processEnded(int exitCode, QProcess::ExitStatus status);
  void simulate();
  void simulationEnded(Outcome outcome);
  void finish(Outcome outcome);

  RealRunRequest m_request;
  QProcess* m_process = nullptr;
  std::unique_ptr<QTemporaryDir> m_dir;
  QByteArray m_pending;  // stderr not yet a whole line
  QStringList m_messages;
  bool m_cancelling = false;
  bool m_runComplete = false;
  Outcome m_outcome = Outcome::Failed;
  QString m_error;
  QPointer<EvaluationRunner> m_runner;
  quint64 m_simTask = 0;  // the runner's task simulating the run; 0 when none runs
  // Its callbacks' context: a simulation replaced goes with it, so the latest one wins.
  QObject* m_simContext = nullptr;
  std::shared_ptr<const Evaluation> m_simulation;
};

}  // namespace shardlens::ui

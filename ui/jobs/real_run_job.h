#pragma once
// Run > Run for real…: the scenario on screen evaluated by real rank processes. The engine is
// `shardlens-cli run` (core/realrun/rank_launcher.h), started as a child process so the ranks
// are its children, never the GUI's: it reports each rank's progress as lines on stderr
// (SHARDLENS_PROGRESS=lines), and SIGTERM cancels it, the ranks end and what arrived is
// written as an incomplete run. Then the same settings are simulated with the `model:`
// predictor in a worker thread, for the comparison.
#include <QFutureWatcher>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>
#include <optional>

#include "core/evaluation/evaluation.h"
#include "core/evaluation/scenario.h"
#include "ui/jobs/job_progress.h"

namespace shardlens::ui {

struct RealRunRequest {
  Scenario scenario;  // the scenario panel's settings (its predictor is replaced by the model)
  QString model;      // TorchScript file
  QString backend = QStringLiteral("gloo");
  QString out;  // the run file to write
};

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
  explicit RealRunJob(QObject* parent = nullptr);
  ~RealRunJob() override;  // a job still running is cancelled and waited for

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
  void finish(Outcome outcome);

  RealRunRequest m_request;
  QProcess* m_process = nullptr;
  std::unique_ptr<QTemporaryDir> m_dir;
  QByteArray m_pending;  // stderr not yet a whole line
  QStringList m_messages;
  bool m_cancelling = false;
  Outcome m_outcome = Outcome::Failed;
  QString m_error;
  std::shared_ptr<JobProgress> m_simProgress;
  QFutureWatcher<std::shared_ptr<const Evaluation>>* m_simWatcher = nullptr;
  std::shared_ptr<const Evaluation> m_simulation;
  QString m_simError;
};

}  // namespace shardlens::ui

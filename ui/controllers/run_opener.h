#pragma once
// Run files in the window (File > Open run, recent files, the command line, a finished real
// run or import): loads them through the job runner, words a failed load as the file's, and
// plays a shown run's epochs (ShownSource steps them). The views stay the window's; a loaded
// run arrives as the runner's finished() result like any simulation.
#include <QObject>
#include <QString>
#include <QTimer>

#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

class RunOpener : public QObject {
  Q_OBJECT
 public:
  explicit RunOpener(EvaluationRunner* runner, QObject* parent = nullptr);

  // Starts loading `path` (.slrun) in the background; returns the runner's job id. The views
  // keep what they show until it has loaded, and keep it when it fails.
  quint64 open(const QString& path);
  // The runner's failure of `job` as the dialog says it: the run file named when the job is
  // the latest open, else `message` as it is.
  QString failureText(quint64 job, const QString& message) const;

  // Play epochs: playStep() once a second until stopped.
  void togglePlay();
  void stopPlaying();
  bool playing() const { return m_play.isActive(); }

 signals:
  void opening(const QString& path);
  void playStep();
  void playingChanged(bool playing);

 private:
  EvaluationRunner* m_runner;
  QString m_pendingPath;  // the run file being opened
  quint64 m_job = 0;      // its job
  QTimer m_play;
};

}  // namespace shardlens::ui

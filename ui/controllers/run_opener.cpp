#include "ui/controllers/run_opener.h"

#include <QFileInfo>

namespace shardlens::ui {

RunOpener::RunOpener(EvaluationRunner* runner, QObject* parent)
    : QObject(parent), m_runner(runner) {
  setObjectName(QStringLiteral("runOpener"));
  m_play.setInterval(1000);
  connect(&m_play, &QTimer::timeout, this, &RunOpener::playStep);
}

quint64 RunOpener::open(const QString& path) {
  m_pendingPath = path;
  m_job = m_runner->startRun(path);
  emit opening(path);
  return m_job;
}

QString RunOpener::failureText(quint64 job, const QString& message) const {
  if (job != m_job) return message;
  return tr("Could not open the run file %1.\n\n%2")
      .arg(QFileInfo(m_pendingPath).fileName(), message);
}

void RunOpener::togglePlay() {
  m_play.isActive() ? m_play.stop() : m_play.start();
  emit playingChanged(m_play.isActive());
}

void RunOpener::stopPlaying() {
  if (!m_play.isActive()) return;
  m_play.stop();
  emit playingChanged(false);
}

}  // namespace shardlens::ui

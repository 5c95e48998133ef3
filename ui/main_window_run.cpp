// Run files in the main window (File > Open run, recent files, the command line) and the
// startup path: the last scenario, or the seed lesson and the welcome panel on first start.
#include <QFileInfo>
#include <QSettings>
#include <QStatusBar>
#include <nlohmann/json.hpp>

#include "ui/main_window.h"
#include "ui/run_banner.h"
#include "ui/scenario_panel.h"
#include "ui/welcome_panel.h"

namespace shardlens::ui {

quint64 MainWindow::openRun(const QString& path) {
  m_pendingRunPath = path;
  m_runJob = m_runner->startRun(path);
  statusBar()->showMessage(tr("Opening %1…").arg(QFileInfo(path).fileName()));
  return m_runJob;
}

bool MainWindow::openFile(const QString& path) {
  if (QFileInfo(path).suffix().compare(QLatin1String("slrun"), Qt::CaseInsensitive) == 0) {
    openRun(path);
    return true;
  }
  return openScenario(path);
}

void MainWindow::onFailed(quint64 job, const QString& message) {
  setBusy(false);
  statusBar()->clearMessage();
  if (job != m_runJob) return showError(message);
  // The views keep what they showed: nothing was replaced yet.
  showError(tr("Could not open the run file %1.\n\n%2")
                .arg(QFileInfo(m_pendingRunPath).fileName(), message));
}

void MainWindow::setRunView(const ResultPtr& result) {
  const bool run = result && !result->eval.provenance.file.empty();
  if (run) {
    m_runPath = result->runPath;
    m_banner->setRun(m_runPath, result->eval);
    // Shown as recorded; the panel never emits for setScenario, so m_scenario (what
    // "Back to simulation" returns to) is untouched.
    m_panel->setScenario(result->eval.scenario());
    addRecent(m_runPath);
  } else {
    if (!showingRun()) return;
    m_runPath.clear();
  }
  m_banner->setVisible(run);
  if (m_simulateRun) m_simulateRun->setEnabled(run);
  m_panel->setEnabled(!run);
  // An import without a recorded scenario would show default settings that never ran.
  m_panelScroll->setVisible(!run || result->eval.scenario_recorded());
  const bool epochs = run && result->epochs && result->epochs->size() > 1;
  for (QAction* a : m_epochActions) a->setEnabled(!run || epochs);
  if (!epochs) {
    m_runPlay.stop();
    m_banner->setPlaying(false);
  }
  updateTitle();
}

void MainWindow::stepRunEpoch(int delta) {
  if (!m_result || !m_result->epochs || m_result->epochs->size() < 2) return;
  const auto& all = *m_result->epochs;
  const int n = int(all.size());
  const int next = ((int(m_result->epochIndex) + delta) % n + n) % n;
  // Shares the ownership of the run's epochs that the shown result holds (evaluation_runner).
  onResult(ResultPtr(m_result, all[size_t(next)].get()));
}

void MainWindow::toggleRunPlay() {
  m_runPlay.isActive() ? m_runPlay.stop() : m_runPlay.start(1000);
  m_banner->setPlaying(m_runPlay.isActive());
}

void MainWindow::leaveRun() {
  if (!showingRun()) return;
  setRunView(nullptr);
  setScenario(m_scenario);  // shows it in the panel again and recomputes
}

void MainWindow::restoreSession() {
  const QString last = QSettings().value(QStringLiteral("lastScenario")).toString();
  if (!last.isEmpty()) {
    try {
      setScenario(scenario_from_json(nlohmann::json::parse(last.toStdString()), "saved settings"));
      return;
    } catch (const std::exception&) {
      // A stale or broken saved scenario falls back to the seed lesson.
    }
  }
  const bool dialogs = m_errorDialogs;
  m_errorDialogs = false;  // a missing lesson is not worth a dialog at startup
  if (!loadLesson(QStringLiteral("seed-lesson"))) setScenario({});
  m_errorDialogs = dialogs;
}

}  // namespace shardlens::ui

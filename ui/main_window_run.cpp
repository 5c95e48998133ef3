// Run files in the main window: the run view (banner, read-only panel, epoch actions), its
// epochs, and Run > Simulate this run's settings in the panel. Loading is RunOpener's.
#include <QAction>
#include <QFileInfo>
#include <QStatusBar>

#include "core/sim/run_scenario.h"
#include "ui/main_window.h"
#include "ui/models/recent_files.h"
#include "ui/panels/run_banner.h"
#include "ui/controllers/run_opener.h"
#include "ui/panels/scenario_panel.h"

namespace shardlens::ui {

quint64 MainWindow::openRun(const QString& path) {
  return m_runs->open(path);
}

bool MainWindow::openFile(const QString& path) {
  if (QFileInfo(path).suffix().compare(QLatin1String("slrun"), Qt::CaseInsensitive) == 0) {
    openRun(path);
    return true;
  }
  return openScenario(path);
}

void MainWindow::setRunView(const ResultPtr& result) {
  const bool run = result && !result->eval.provenance.file.empty();
  if (run) {
    m_runPath = result->runPath;
    m_banner->setRun(m_runPath, result->eval);
    // Shown as recorded; the panel never emits for setScenario, so m_scenario (what
    // "Back to simulation" returns to) is untouched.
    m_panel->setScenario(result->eval.scenario());
    m_recent->add(m_runPath);
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
    m_runs->stopPlaying();
    m_banner->setPlaying(false);
  }
  updateTitle();
}

void MainWindow::stepRunEpoch(int delta) {
  // From the epoch last asked for: quick steps add up while views are being prepared.
  if (ResultPtr next = RunOpener::epochAfter(m_requested ? m_requested : m_result, delta))
    onResult(std::move(next));
}

void MainWindow::leaveRun() {
  if (!showingRun()) return;
  setRunView(nullptr);
  setScenario(m_scenario);  // shows it in the panel again and recomputes
}

void MainWindow::onRunSimulated(const LikeScenario& like) {
  // Shown read-only beside the run; "Back to simulation" simulates it when its specs are
  // complete (a run's own predictions have no spec).
  m_panel->setScenario(like.scenario);
  m_panelScroll->setVisible(true);
  if (!like.scenario.dataset.empty() && !like.scenario.predictor.empty())
    m_scenario = like.scenario;
  QStringList said;
  for (const UnknownSetting& u : like.unknown)
    said << tr("%1 (not recorded; the default was used)").arg(QString::fromStdString(u.what));
  for (const std::string& note : like.notes) said << QString::fromStdString(note);
  if (!said.isEmpty()) statusBar()->showMessage(said.join(QStringLiteral("; ")), 15000);
}

}  // namespace shardlens::ui

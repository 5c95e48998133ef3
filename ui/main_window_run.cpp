// Run files in the main window: how each mode looks (the run's banner, read-only panel and
// epoch actions, or the editable panel), its epochs, a followed runs folder, and Run >
// Simulate this run's settings in the panel. Which mode is on is ShownSource's; loading is
// RunOpener's, following a folder FollowController's.
#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QStatusBar>

#include "core/sim/recorded_run_simulation.h"
#include "ui/controllers/follow_controller.h"
#include "ui/controllers/run_opener.h"
#include "ui/main_window.h"
#include "ui/models/recent_files.h"
#include "ui/models/shown_source.h"
#include "ui/panels/run_banner.h"
#include "ui/panels/scenario_panel.h"
#include "ui/views/charts.h"
#include "ui/views/drift_view.h"

namespace shardlens::ui {

quint64 MainWindow::openRun(const QString& path) {
  return m_runs->open(path);
}

bool MainWindow::followRuns(const QString& folder) {
  // Until the first run file lands, the last scenario rather than empty views. Its result
  // comes first: a landing is added only while the runner is idle.
  if (!m_source->requested()) restoreSession();
  return m_follow->follow(folder);
}

void MainWindow::stopFollowing() {
  m_follow->stop();
}

void MainWindow::connectFollowing() {
  connect(m_follow, &FollowController::show, this, &MainWindow::onResult);
  connect(m_follow, &FollowController::grew, this, [this] {
    // The user stays on an older validation: its banner and epoch actions count the new ones,
    // and the drift, drawn from its siblings, gains their columns; the views stay as they are.
    if (!showingRun()) return;
    showRunView(m_source->result());
    m_charts->driftView()->setResult(m_source->result());
  });
  connect(m_follow, &FollowController::failed, this, &MainWindow::showError);
  connect(m_follow, &FollowController::stopped, this,
          [this](const QString& message) { statusBar()->showMessage(message, 6000); });
  connect(m_follow, &FollowController::statusChanged, this, [this](const QString& text) {
    m_followStatus->setText(text);
    m_followStatus->setToolTip(QDir::toNativeSeparators(m_follow->folder()));
    m_followStatus->setVisible(!text.isEmpty());
    m_stopFollowing->setEnabled(m_follow->following());
  });
  // Another run file opened (File > Open run, a recent one, an import, a real run) ends it.
  connect(m_runs, &RunOpener::opening, m_follow, &FollowController::stop);
}

bool MainWindow::openFile(const QString& path) {
  if (QFileInfo(path).suffix().compare(QLatin1String("slrun"), Qt::CaseInsensitive) == 0) {
    openRun(path);
    return true;
  }
  return openScenario(path);
}

void MainWindow::showRunView(const ResultPtr& run) {
  m_banner->setRun(m_source->runPath(), run->eval);
  // Shown as recorded; the panel never emits for setScenario, so the scenario that "Back to
  // simulation" returns to is untouched.
  m_panel->setScenario(run->eval.scenario());
  if (!m_follow->following()) m_recent->add(m_source->runPath());  // not every validation
  m_banner->show();
  m_simulateRun->setEnabled(true);
  m_panel->setEnabled(false);
  // An import without a recorded scenario would show default settings that never ran.
  m_panelScroll->setVisible(run->eval.scenario_recorded());
  const bool epochs = m_source->showingEpochs();
  for (QAction* a : m_epochActions) a->setEnabled(epochs);
  if (!epochs) {
    m_runs->stopPlaying();
    m_banner->setPlaying(false);
  }
  updateTitle();
}

void MainWindow::showSimulationView() {
  m_follow->stop();  // back to simulation, or a lesson or scenario chosen instead
  m_banner->hide();
  m_simulateRun->setEnabled(false);
  m_panel->setEnabled(true);
  m_panelScroll->setVisible(true);
  for (QAction* a : m_epochActions) a->setEnabled(true);
  m_runs->stopPlaying();
  m_banner->setPlaying(false);
  updateTitle();
}

void MainWindow::stepRunEpoch(int delta) {
  // From the epoch last asked for: quick steps add up while views are being prepared.
  if (ResultPtr next = m_source->epochAfter(delta)) onResult(std::move(next));
}

void MainWindow::leaveRun() {
  if (!m_source->leaveRun()) return;
  setScenario(m_source->scenario());  // shows it in the panel again and recomputes
}

void MainWindow::onRunSimulated(const RecordedRunScenario& like) {
  // Shown read-only beside the run; "Back to simulation" simulates it when its specs are
  // complete (a run's own predictions have no spec).
  m_panel->setScenario(like.scenario);
  m_panelScroll->setVisible(true);
  if (!like.scenario.dataset.empty() && !like.scenario.predictor.empty())
    m_source->setScenario(like.scenario);
  QStringList said;
  for (const UnrecordedSetting& u : like.unrecorded)
    said << tr("%1 (not recorded; the default was used)").arg(QString::fromStdString(u.what));
  for (const AssumedSetting& a : like.assumptions) said << QString::fromStdString(a.what);
  if (!said.isEmpty()) statusBar()->showMessage(said.join(QStringLiteral("; ")), 15000);
}

}  // namespace shardlens::ui

// Run > Simulate this run: the open run's recorded settings as a scenario
// (core/sim/run_scenario.h, shared with `shardlens-cli simulate --like`), shown in the
// scenario panel and compared with the run.
#include <QApplication>
#include <QFileInfo>
#include <QStatusBar>

#include "core/sim/run_scenario.h"
#include "ui/compare_dialog.h"
#include "ui/main_window.h"
#include "ui/scenario_panel.h"

namespace shardlens::ui {

CompareDialog* MainWindow::simulateThisRun() {
  if (!showingRun() || !m_result) return nullptr;
  std::vector<const Evaluation*> all;
  size_t which = 0;
  if (m_result->epochs) {
    for (const auto& r : *m_result->epochs) all.push_back(&r->eval);
    which = m_result->epochIndex;
  } else {
    all.push_back(&m_result->eval);
  }
  const Evaluation& run = *all[which];
  const std::string origin = m_runPath.toStdString();
  LikeScenario like;
  std::shared_ptr<const Evaluation> sim;
  try {
    QApplication::setOverrideCursor(Qt::WaitCursor);
    like = scenario_like(all, which, origin);
    const auto inputs = inputs_like(run, like.scenario, run.scenario_recorded(), origin);
    sim = std::make_shared<const Evaluation>(simulate_like(like.scenario, run, inputs));
    QApplication::restoreOverrideCursor();
  } catch (const std::exception& e) {
    QApplication::restoreOverrideCursor();
    showError(tr("Could not simulate this run.\n\n%1").arg(QString::fromStdString(e.what())));
    return nullptr;
  }
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
  return compareWithEvaluation(std::move(sim),
                               tr("simulation of %1").arg(QFileInfo(m_runPath).fileName()));
}

}  // namespace shardlens::ui

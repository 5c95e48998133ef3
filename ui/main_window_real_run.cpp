// Run > Run for real…: the scenario on screen on real rank processes, then the run beside the
// simulation of the same settings with the `model:` predictor, or a dialog that says what to
// do when something failed. The ranks and their progress are RealRunJob's.
#include <QFileInfo>
#include <QStatusBar>

#include "ui/compare_dialog.h"
#include "ui/main_window.h"
#include "ui/real_run_dialog.h"

namespace shardlens::ui {

RealRunDialog* MainWindow::showRealRunDialog() {
  if (m_realRun) {
    m_realRun->setScenario(m_scenario);
    m_realRun->raise();
    m_realRun->activateWindow();
    return m_realRun;
  }
  m_realRun = new RealRunDialog(m_scenario, this);
  m_realRun->setAttribute(Qt::WA_DeleteOnClose);
  connect(m_realRun, &RealRunDialog::refused, this,
          [this](const QString& why) { showError(tr("Cannot run for real.\n\n%1").arg(why)); });
  connect(m_realRun, &RealRunDialog::jobFinished, this, &MainWindow::onRealRunFinished);
  m_realRun->show();
  return m_realRun;
}

CompareDialog* MainWindow::realRunComparison() const {
  return m_realCompare;
}

void MainWindow::onRealRunFinished(RealRunJob* job) {
  const QString out = job->request().out;
  const QString name = QFileInfo(out).fileName();
  const QString cause = job->error();
  switch (job->outcome()) {
    case RealRunJob::Outcome::Complete: {
      const std::shared_ptr<const Evaluation> simulation = job->simulation();
      const QString simName =
          tr("simulation, model:%1").arg(QFileInfo(job->request().model).fileName());
      const quint64 opened = openRun(out);
      // Once the run is on screen, the comparison opens beside it.
      auto once = std::make_shared<QMetaObject::Connection>();
      *once = connect(this, &MainWindow::resultShown, this, [=, this](quint64 shown) {
        if (shown != opened) return;
        disconnect(*once);
        m_realCompare = compareWithEvaluation(simulation, simName);
      });
      if (m_realRun) m_realRun->accept();
      return;
    }
    case RealRunJob::Outcome::Incomplete:
      // A rank died (named in the cause): what arrived is kept and shown.
      openRun(out);
      return showError(tr("The real run did not complete; what arrived is opened as the "
                          "incomplete run %1.\n\n%2\n\nCheck the rank named above (memory, the "
                          "model, the dataset), then run again.")
                           .arg(name, cause));
    case RealRunJob::Outcome::Cancelled:
      if (job->runWritten()) {
        openRun(out);
        statusBar()->showMessage(
            tr("Run cancelled: what arrived is shown as the incomplete run %1").arg(name), 8000);
      } else {
        statusBar()->showMessage(tr("Run cancelled before any rank reported"), 8000);
      }
      if (m_realRun) m_realRun->accept();
      return;
    case RealRunJob::Outcome::Failed:
      return showError(tr("The real run could not start.\n\n%1\n\nFix the setting named above "
                          "in the scenario panel or the Run for real dialog, then run again.")
                           .arg(cause.isEmpty() ? tr("shardlens-cli gave no reason.") : cause));
  }
}

}  // namespace shardlens::ui

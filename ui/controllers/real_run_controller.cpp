#include "ui/controllers/real_run_controller.h"

#include <QFileInfo>

#include "ui/controllers/compare_controller.h"
#include "ui/controllers/run_opener.h"
#include "ui/dialogs/compare_dialog.h"
#include "ui/dialogs/real_run_dialog.h"
#include "ui/jobs/real_run_job.h"

namespace shardlens::ui {

RealRunController::RealRunController(EvaluationRunner* runner, RunOpener* runs,
                                     CompareController* compare, QWidget* window)
    : QObject(window), m_runner(runner), m_runs(runs), m_compare(compare), m_window(window) {
  setObjectName(QStringLiteral("realRunController"));
}

RealRunController::~RealRunController() {
  delete m_dialog;
}

RealRunDialog* RealRunController::showDialog(const Scenario& scenario) {
  if (m_dialog) {
    m_dialog->setScenario(scenario);
    m_dialog->raise();
    m_dialog->activateWindow();
    return m_dialog;
  }
  m_dialog = new RealRunDialog(scenario, m_runner, m_window);
  m_dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(m_dialog, &RealRunDialog::refused, this,
          [this](const QString& why) { emit error(tr("Cannot run for real.\n\n%1").arg(why)); });
  connect(m_dialog, &RealRunDialog::jobFinished, this, &RealRunController::onFinished);
  m_dialog->show();
  return m_dialog;
}

CompareDialog* RealRunController::comparison() const {
  return m_comparison;
}

void RealRunController::resultShown(const ResultPtr& shown) {
  if (!m_pendingJob || !shown || shown->jobId != m_pendingJob) return;
  m_pendingJob = 0;
  m_comparison = m_compare->show(std::move(m_pendingSimulation), m_pendingName);
}

void RealRunController::onFinished(RealRunJob* job) {
  const QString out = job->request().out;
  const QString name = QFileInfo(out).fileName();
  const QString cause = job->error();
  switch (job->outcome()) {
    case RealRunJob::Outcome::Complete:
      // Once the run is on screen, the comparison opens beside it.
      m_pendingSimulation = job->simulation();
      m_pendingName = tr("simulation, model:%1").arg(QFileInfo(job->request().model).fileName());
      m_pendingJob = m_runs->open(out);
      if (m_dialog) m_dialog->accept();
      return;
    case RealRunJob::Outcome::Incomplete:
      // A rank died (named in the cause): what arrived is kept and shown.
      m_runs->open(out);
      return emit error(tr("The real run did not complete; what arrived is opened as the "
                           "incomplete run %1.\n\n%2\n\nCheck the rank named above (memory, the "
                           "model, the dataset), then run again.")
                            .arg(name, cause));
    case RealRunJob::Outcome::Cancelled:
      if (job->runComplete() && job->runWritten()) {
        // Only the simulation was cancelled: the run is whole and shown as it is.
        m_runs->open(out);
        emit status(tr("Simulation cancelled: the complete run %1 is shown, without the "
                       "comparison")
                        .arg(name),
                    8000);
      } else if (job->runWritten()) {
        m_runs->open(out);
        emit status(tr("Run cancelled: what arrived is shown as the incomplete run %1").arg(name),
                    8000);
      } else {
        emit status(tr("Run cancelled before any rank reported"), 8000);
      }
      if (m_dialog) m_dialog->accept();
      return;
    case RealRunJob::Outcome::Failed:
      return emit error(tr("The real run could not start.\n\n%1\n\nFix the setting named above "
                           "in the scenario panel or the Run for real dialog, then run again.")
                            .arg(cause.isEmpty() ? tr("shardlens-cli gave no reason.") : cause));
  }
}

}  // namespace shardlens::ui

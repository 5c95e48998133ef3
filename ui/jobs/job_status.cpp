#include "ui/jobs/job_status.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

JobStatus::JobStatus(EvaluationRunner* runner, QWidget* parent)
    : QWidget(parent), m_stage(new QLabel(this)), m_progress(new QProgressBar(this)) {
  setObjectName(QStringLiteral("jobStatus"));
  m_progress->setRange(0, 100);
  m_progress->setMaximumWidth(160);
  auto* cancel = new QToolButton(this);
  cancel->setText(tr("Cancel"));
  cancel->setToolTip(tr("Stop the running evaluation (Esc)"));
  connect(cancel, &QToolButton::clicked, runner, &EvaluationRunner::cancel);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_stage);
  layout->addWidget(m_progress);
  layout->addWidget(cancel);
  connect(runner, &EvaluationRunner::progress, this,
          [this](quint64, const QString& stage, double fraction) {
            setBusy(true);
            m_stage->setText(stage);
            m_progress->setValue(int(fraction * 100));
          });
  connect(runner, &EvaluationRunner::finished, this, [this] { setBusy(false); });
  connect(runner, &EvaluationRunner::failed, this, [this] { setBusy(false); });
  connect(runner, &EvaluationRunner::cancelled, this, [this] { setBusy(false); });
  setBusy(false);
}

void JobStatus::setBusy(bool busy) {
  setVisible(busy);
}

}  // namespace shardlens::ui

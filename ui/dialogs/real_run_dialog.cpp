#include "ui/dialogs/real_run_dialog.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>

#include "core/sim/specs.h"

namespace shardlens::ui {

namespace {

// One line of the settings the ranks will run, as the scenario panel shows them.
QString settingsLine(const Scenario& s) {
  return QCoreApplication::translate("RealRun",
                                     "%1 · %2 rank(s) · sampler %3 · batch %4 · sync %5 · %6 "
                                     "counters")
      .arg(QString::fromStdString(s.dataset))
      .arg(s.sampler.world_size)
      .arg(QString::fromStdString(to_string(s.sampler.kind)))
      .arg(s.loader.batch_size)
      .arg(QString::fromStdString(to_string(s.sync)), QString::fromStdString(to_string(s.dtype)));
}

QHBoxLayout* withButton(QLineEdit* edit, QPushButton* button) {
  auto* row = new QHBoxLayout;
  row->addWidget(edit, 1);
  row->addWidget(button);
  return row;
}

}  // namespace

RealRunDialog::RealRunDialog(const Scenario& scenario, EvaluationRunner* runner, QWidget* parent)
    : QDialog(parent),
      m_scenario(scenario),
      m_model(new QLineEdit(QString::fromStdString(reference_model_path()), this)),
      m_backend(new QComboBox(this)),
      m_out(new QLineEdit(defaultRunPath(scenario), this)),
      m_browseModel(new QPushButton(tr("Choose…"), this)),
      m_browseOut(new QPushButton(tr("Choose…"), this)),
      m_settings(new QLabel(settingsLine(scenario), this)),
      m_status(new QLabel(this)),
      m_rankRows(new QVBoxLayout),
      m_run(new QPushButton(tr("&Run"), this)),
      m_cancel(new QPushButton(tr("Close"), this)),
      m_job(new RealRunJob(runner, this)),
      m_buildRefusal(realRunBuildRefusal()) {
  setWindowTitle(tr("Run for real"));
  setMinimumWidth(760);  // room for a run file's path
  m_model->setObjectName(QStringLiteral("realRunModel"));
  m_model->setToolTip(tr("TorchScript model: raw pixels [N,1,H,W] in, logits [N,C] out"));
  m_backend->setObjectName(QStringLiteral("realRunBackend"));
  m_backend->addItem(QStringLiteral("gloo"));
  if (ncclAvailable()) m_backend->addItem(QStringLiteral("nccl"));
  m_backend->setToolTip(tr("gloo: CPU collectives; nccl (with NVIDIA GPUs): one GPU per rank"));
  m_out->setObjectName(QStringLiteral("realRunOut"));
  m_settings->setWordWrap(true);
  m_settings->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Plain text: a dataset spec, a path or an error message is shown as written.
  m_settings->setTextFormat(Qt::PlainText);
  m_status->setTextFormat(Qt::PlainText);
  m_status->setObjectName(QStringLiteral("realRunStatus"));
  m_status->setWordWrap(true);
  m_status->setText(m_buildRefusal.isEmpty()
                        ? tr("The ranks run as processes of shardlens-cli; the run is then shown "
                             "beside the simulation of the same settings with the model's "
                             "predictions.")
                        : m_buildRefusal);  // said before any click, with Run disabled (setRunning)

  connect(m_browseModel, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("TorchScript model"),
                                                      m_model->text(), tr("Models (*.pt *.pth)"));
    if (!path.isEmpty()) m_model->setText(path);
  });
  connect(m_browseOut, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the run as"), m_out->text(),
                                                      tr("ShardLens runs (*.slrun)"));
    if (!path.isEmpty()) m_out->setText(path);
  });

  auto* form = new QFormLayout;
  form->addRow(tr("Settings"), m_settings);
  form->addRow(tr("Model"), withButton(m_model, m_browseModel));
  form->addRow(tr("Backend"), m_backend);
  form->addRow(tr("Run file"), withButton(m_out, m_browseOut));

  auto* buttons = new QDialogButtonBox(this);
  m_run->setObjectName(QStringLiteral("realRunStart"));
  m_cancel->setObjectName(QStringLiteral("realRunCancel"));
  m_run->setDefault(true);
  buttons->addButton(m_run, QDialogButtonBox::ActionRole);
  buttons->addButton(m_cancel, QDialogButtonBox::RejectRole);
  connect(m_run, &QPushButton::clicked, this, &RealRunDialog::startRun);
  connect(m_cancel, &QPushButton::clicked, this, &RealRunDialog::reject);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(m_rankRows);
  layout->addWidget(m_status);
  layout->addStretch(1);
  layout->addWidget(buttons);

  connect(m_job, &RealRunJob::rankProgress, this, &RealRunDialog::onRankProgress);
  connect(m_job, &RealRunJob::stage, m_status, &QLabel::setText);
  connect(m_job, &RealRunJob::finished, this, [this] {
    setRunning(false);
    emit jobFinished(m_job);
  });
  setRunning(false);
}

void RealRunDialog::setScenario(const Scenario& scenario) {
  if (m_job->running()) return;
  m_scenario = scenario;
  m_settings->setText(settingsLine(scenario));
}

RealRunRequest RealRunDialog::request() const {
  RealRunRequest r;
  r.scenario = m_scenario;
  r.model = m_model->text().trimmed();
  r.backend = m_backend->currentText();
  r.out = m_out->text().trimmed();
  return r;
}

QString RealRunDialog::statusText() const {
  return m_status->text();
}

void RealRunDialog::startRun() {
  if (m_job->running()) return;
  const RealRunRequest r = request();
  QString why = realRunRefusal(r);
  if (why.isEmpty() && r.out.isEmpty()) why = tr("Name the run file to write.");
  if (!why.isEmpty()) {
    m_status->setText(why);
    emit refused(why);
    return;
  }
  // One row per rank: its bar and what it does.
  qDeleteAll(m_bars);
  qDeleteAll(m_stages);
  m_bars.clear();
  m_stages.clear();
  while (QLayoutItem* item = m_rankRows->takeAt(0)) delete item;
  for (int rank = 0; rank < r.scenario.sampler.world_size; ++rank) {
    auto* bar = new QProgressBar(this);
    bar->setRange(0, 1000);
    bar->setValue(0);
    bar->setFormat(tr("rank %1: %p%").arg(rank));
    bar->setObjectName(QStringLiteral("rankProgress%1").arg(rank));
    auto* stage = new QLabel(tr("starting"), this);
    stage->setMinimumWidth(120);
    auto* row = new QHBoxLayout;
    row->addWidget(bar, 1);
    row->addWidget(stage);
    m_rankRows->addLayout(row);
    m_bars << bar;
    m_stages << stage;
  }
  setRunning(true);
  m_job->start(r);
}

void RealRunDialog::onRankProgress(int rank, const QString& stage, double fraction) {
  if (rank < 0 || rank >= m_bars.size()) return;
  m_bars[rank]->setValue(int(fraction * 1000));
  m_stages[rank]->setText(stage);
  int done = 0;
  for (const QProgressBar* bar : m_bars) done += bar->value() == bar->maximum();
  m_status->setText(
      done == m_bars.size()
          ? tr("Every rank has evaluated its shard: synchronizing and writing the "
               "run…")
          : tr("The ranks evaluate their shards (%1 of %2 done)…").arg(done).arg(m_bars.size()));
}

void RealRunDialog::setRunning(bool running) {
  // A build that cannot run models never enables Run: the reason is in the status line.
  m_run->setEnabled(!running && m_buildRefusal.isEmpty());
  m_run->setToolTip(m_buildRefusal);
  m_model->setEnabled(!running);
  m_backend->setEnabled(!running);
  m_out->setEnabled(!running);
  m_browseModel->setEnabled(!running);
  m_browseOut->setEnabled(!running);
  m_cancel->setText(running ? tr("Cancel") : tr("Close"));
}

void RealRunDialog::reject() {
  if (m_job->running()) {
    m_job->cancel();  // the dialog closes once the ranks have ended (jobFinished)
    return;
  }
  QDialog::reject();
}

}  // namespace shardlens::ui

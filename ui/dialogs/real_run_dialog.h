#pragma once
// Run > Run for real…: the scenario panel's settings, a model (the reference model by
// default) and a backend; while the ranks run, one progress bar per rank and Cancel. What
// happens with the result (the run opened beside its simulation, or a dialog saying what went
// wrong) is RealRunController's (ui/controllers/real_run_controller.cpp).
#include <QDialog>
#include <QList>

#include "ui/jobs/real_run_job.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QVBoxLayout;

namespace shardlens::ui {

class RealRunDialog : public QDialog {
  Q_OBJECT
 public:
  // The job's simulation runs on `runner`.
  RealRunDialog(const Scenario& scenario, EvaluationRunner* runner, QWidget* parent = nullptr);

  // The settings to run (the scenario panel's); ignored while a job runs.
  void setScenario(const Scenario& scenario);
  // The request the fields describe.
  RealRunRequest request() const;
  QLineEdit* modelEdit() const { return m_model; }
  QLineEdit* outEdit() const { return m_out; }
  QComboBox* backendBox() const { return m_backend; }
  QPushButton* runButton() const { return m_run; }
  QPushButton* cancelButton() const { return m_cancel; }
  RealRunJob* job() const { return m_job; }
  // One bar per rank while running (rank order).
  const QList<QProgressBar*>& rankBars() const { return m_bars; }
  QString statusText() const;

  // Starts the job (the Run button); refused requests emit refused() and start nothing.
  void startRun();

 signals:
  void refused(const QString& why);
  void jobFinished(shardlens::ui::RealRunJob* job);

 protected:
  void reject() override;  // Escape / Close: cancels a running job first

 private:
  void setRunning(bool running);
  void onRankProgress(int rank, const QString& stage, double fraction);

  Scenario m_scenario;
  QLineEdit* m_model;
  QComboBox* m_backend;
  QLineEdit* m_out;
  QPushButton* m_browseModel;
  QPushButton* m_browseOut;
  QLabel* m_settings;
  QLabel* m_status;
  QVBoxLayout* m_rankRows;
  QList<QProgressBar*> m_bars;
  QList<QLabel*> m_stages;
  QPushButton* m_run;
  QPushButton* m_cancel;
  RealRunJob* m_job;
  const QString m_buildRefusal;  // why this build cannot run models, or empty
};

}  // namespace shardlens::ui

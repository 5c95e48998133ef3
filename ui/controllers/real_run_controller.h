#pragma once
// Run > Run for real…: the scenario on screen on real rank processes (RealRunDialog, one at a
// time), then the run opened and, complete, beside the simulation of the same settings with
// the `model:` predictor; or a message that says what to do when something failed. The
// ranks and their progress are RealRunJob's.
#include <QObject>
#include <QPointer>
#include <QString>
#include <memory>

#include "core/evaluation/scenario.h"
#include "ui/jobs/evaluation_runner.h"

class QWidget;

namespace shardlens::ui {

class CompareController;
class CompareDialog;
class RealRunDialog;
class RealRunJob;
class RunOpener;

class RealRunController : public QObject {
  Q_OBJECT
 public:
  // Dialogs open over `window`; a run's simulation runs on `runner`, runs open through
  // `runs`, comparisons through `compare`.
  RealRunController(EvaluationRunner* runner, RunOpener* runs, CompareController* compare,
                    QWidget* window);
  ~RealRunController() override;  // an open dialog goes with it (its job cancelled)

  // The dialog for `scenario`: the open one, given the new settings, or a new one.
  RealRunDialog* showDialog(const Scenario& scenario);
  // The comparison opened after the last complete run; null until then.
  CompareDialog* comparison() const;
  // Every result the window shows: the run opened after a complete real run opens its
  // comparison once it is on screen.
  void resultShown(const ResultPtr& shown);

 signals:
  void error(const QString& message);
  void status(const QString& message, int timeoutMs);

 private:
  void onFinished(RealRunJob* job);

  EvaluationRunner* m_runner;
  RunOpener* m_runs;
  CompareController* m_compare;
  QWidget* m_window;
  QPointer<RealRunDialog> m_dialog;
  QPointer<CompareDialog> m_comparison;
  // A complete run being opened: its job, and the simulation to show beside it.
  quint64 m_pendingJob = 0;
  std::shared_ptr<const Evaluation> m_pendingSimulation;
  QString m_pendingName;
};

}  // namespace shardlens::ui

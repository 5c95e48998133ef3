#pragma once
// Compare with… and Run > Simulate this run: another run, epoch or scenario, or the shown
// run's simulation, beside the evaluation on screen in a CompareDialog. Every load and
// simulation runs as a task of the job runner, so the window keeps responding; the dialog
// opens when it is done (opened()), or failed() says why not.
#include <QObject>
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>
#include <vector>

#include "core/runfile/runfile.h"
#include "core/sim/recorded_run_simulation.h"
#include "ui/jobs/evaluation_runner.h"

class QWidget;

namespace shardlens::ui {

class CompareDialog;

class CompareController : public QObject {
  Q_OBJECT
  Q_MOC_INCLUDE("ui/dialogs/compare_dialog.h")
 public:
  // Dialogs open over `window`.
  CompareController(EvaluationRunner* runner, QWidget* window);

  // The left side of every comparison: the evaluation on screen and its name.
  void setCurrent(std::shared_ptr<const Evaluation> current, const QString& name);

  // File > Compare with…: asks for a run or scenario file and, of a run of several
  // evaluations, which one (listed from the run's meta.json alone; only the chosen one is
  // compared), then compareWith().
  void ask();
  // Loads `other` in the background and opens it beside the current evaluation: a run file
  // (its evaluation `index`, else the first of `epoch`, else the first) or a scenario file
  // (simulated). Returns the task, 0 when nothing is on screen yet.
  quint64 compareWith(const QString& other, std::optional<int64_t> epoch = std::nullopt,
                      std::optional<size_t> index = std::nullopt);
  // `other` (named `otherName`) beside the current evaluation, now.
  CompareDialog* show(std::shared_ptr<const Evaluation> other, const QString& otherName);
  // Run > Simulate this run: the recorded settings of the run `shown` (read from `runPath`)
  // simulated in the background; simulated() gives the settings, then the comparison opens.
  quint64 simulateRun(const ResultPtr& shown, const QString& runPath);

  // "epoch 1, dataloader 1": one picker line per evaluation of a run.
  static QStringList evaluationLabels(const std::vector<RunEvaluationEntry>& entries);

 signals:
  void opened(shardlens::ui::CompareDialog* dialog);
  void simulated(const shardlens::RecordedRunScenario& like);
  void failed(const QString& message);

 private:
  void pickAndCompare(const QString& path, const std::vector<RunEvaluationEntry>& entries);
  CompareDialog* open(std::shared_ptr<const Evaluation> current, const QString& currentName,
                      std::shared_ptr<const Evaluation> other, const QString& otherName);

  EvaluationRunner* m_runner;
  QWidget* m_window;
  std::shared_ptr<const Evaluation> m_current;
  QString m_currentName;
};

}  // namespace shardlens::ui

#include "ui/controllers/compare_controller.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <utility>

#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/vocabulary/types.h"
#include "ui/dialogs/compare_dialog.h"

namespace shardlens::ui {

namespace {

bool isRunFile(const QString& path) {
  return path.endsWith(QLatin1String(".slrun"), Qt::CaseInsensitive);
}

// The other side of a comparison, loaded in the worker, with the name it is shown under.
struct Loaded {
  std::shared_ptr<const Evaluation> evaluation;
  QString name;
};

Loaded loadOther(const QString& other, std::optional<int64_t> epoch, std::optional<size_t> index) {
  Loaded out;
  out.name = QFileInfo(other).fileName();
  const std::string path = other.toStdString();
  if (!isRunFile(other)) {
    out.evaluation = std::make_shared<const Evaluation>(simulate_preset(path));
    return out;
  }
  std::vector<Evaluation> all = load_run_evaluations(path);
  const size_t count = all.size();
  if (index && *index >= count)
    throw InputError(path + ": holds " + std::to_string(count) + " evaluations");
  Evaluation picked = index   ? std::move(all[*index])
                      : epoch ? select_epoch(std::move(all), *epoch, path)
                              : std::move(all.front());
  if (count > 1) out.name += QStringLiteral("@%1").arg(picked.epoch());
  if (count > 1 && (picked.validation() >= 0 || picked.dataloader() >= 0))
    out.name += QStringLiteral(" (%1)").arg(QString::fromStdString(evaluation_label(picked)));
  out.evaluation = std::make_shared<const Evaluation>(std::move(picked));
  return out;
}

}  // namespace

CompareController::CompareController(EvaluationRunner* runner, QWidget* window)
    : QObject(window), m_runner(runner), m_window(window) {
  setObjectName(QStringLiteral("compareController"));
}

void CompareController::setCurrent(std::shared_ptr<const Evaluation> current, const QString& name) {
  m_current = std::move(current);
  m_currentName = name;
}

QStringList CompareController::evaluationLabels(const std::vector<RunEvaluationEntry>& entries) {
  QStringList labels;
  for (const RunEvaluationEntry& entry : entries) {
    Evaluation e;  // only the fields evaluation_label() reads
    e.meta.epoch = entry.epoch.value_or(0);
    e.meta.stage = entry.stage;
    e.meta.validation_in_epoch = entry.validation_in_epoch;
    e.meta.dataloader_idx = entry.dataloader_idx;
    labels << QString::fromStdString(evaluation_label(e));
  }
  return labels;
}

void CompareController::ask() {
  const QString path = QFileDialog::getOpenFileName(
      m_window, tr("Compare with"), QString(),
      tr("Runs and scenarios (*.slrun *.json);;ShardLens runs (*.slrun);;Scenarios (*.json)"));
  if (path.isEmpty()) return;
  if (!isRunFile(path)) {
    compareWith(path);
    return;
  }
  m_runner->startTask(
      this, tr("Reading %1").arg(QFileInfo(path).fileName()),
      [path](JobProgress*) { return list_run_evaluations(path.toStdString()); },
      [this, path](std::vector<RunEvaluationEntry> entries) { pickAndCompare(path, entries); },
      [this, path](const QString& message) {
        emit failed(tr("Could not read %1.\n\n%2").arg(QFileInfo(path).fileName(), message));
      });
}

void CompareController::pickAndCompare(const QString& path,
                                       const std::vector<RunEvaluationEntry>& entries) {
  std::optional<size_t> index;
  if (entries.size() > 1) {
    const QStringList items = evaluationLabels(entries);
    bool ok = false;
    const QString picked = QInputDialog::getItem(
        m_window, tr("Compare with"), tr("The run holds several evaluations; compare with:"), items,
        0, false, &ok);
    if (!ok) return;
    index = size_t(items.indexOf(picked));
  }
  compareWith(path, std::nullopt, index);
}

quint64 CompareController::compareWith(const QString& other, std::optional<int64_t> epoch,
                                       std::optional<size_t> index) {
  if (!m_current) return 0;
  const QString name = QFileInfo(other).fileName();
  // Beside what was on screen when asked, whatever is shown when the load is done.
  return m_runner->startTask(
      this, tr("Comparing with %1").arg(name),
      [other, epoch, index](JobProgress*) { return loadOther(other, epoch, index); },
      [this, current = m_current, currentName = m_currentName](Loaded loaded) {
        open(current, currentName, std::move(loaded.evaluation), loaded.name);
      },
      [this, name](const QString& message) {
        emit failed(tr("Could not compare with %1.\n\n%2").arg(name, message));
      });
}

CompareDialog* CompareController::show(std::shared_ptr<const Evaluation> other,
                                       const QString& otherName) {
  if (!m_current) return nullptr;
  return open(m_current, m_currentName, std::move(other), otherName);
}

CompareDialog* CompareController::open(std::shared_ptr<const Evaluation> current,
                                       const QString& currentName,
                                       std::shared_ptr<const Evaluation> other,
                                       const QString& otherName) {
  auto* dialog =
      new CompareDialog(std::move(current), currentName, std::move(other), otherName, m_window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  emit opened(dialog);
  return dialog;
}

namespace {

struct Simulated {
  RecordedRunScenario like;
  std::shared_ptr<const Evaluation> simulation;
};

Simulated simulateLike(const ResultPtr& shown, const std::string& origin) {
  std::vector<const Evaluation*> all;
  size_t which = 0;
  if (shown->epochs) {
    for (const auto& r : *shown->epochs) all.push_back(&r->eval);
    which = shown->epochIndex;
  } else {
    all.push_back(&shown->eval);
  }
  const Evaluation& run = *all[which];
  Simulated out;
  out.like = recorded_run_scenario(all, which, origin);
  const auto inputs = recorded_run_inputs(run, out.like.scenario, run.scenario_recorded(), origin);
  out.simulation =
      std::make_shared<const Evaluation>(simulate_recorded_run(out.like.scenario, run, inputs));
  return out;
}

}  // namespace

quint64 CompareController::simulateRun(const ResultPtr& shown, const QString& runPath) {
  if (!shown || !m_current) return 0;
  const QString name = QFileInfo(runPath).fileName();
  return m_runner->startTask(
      this, tr("Simulating %1").arg(name),
      [shown, origin = runPath.toStdString()](JobProgress*) { return simulateLike(shown, origin); },
      [this, name, current = m_current, currentName = m_currentName](Simulated s) {
        emit simulated(s.like);
        open(current, currentName, std::move(s.simulation), tr("simulation of %1").arg(name));
      },
      [this](const QString& message) {
        emit failed(tr("Could not simulate this run.\n\n%1").arg(message));
      });
}

}  // namespace shardlens::ui

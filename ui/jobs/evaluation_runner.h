#pragma once
// The one job runner: every load and computation of the GUI runs here, off the GUI thread.
// The views' job (start(), startRun()): every start gets a new job id and cancels the job
// before it; a result whose id is no longer the latest is dropped, so a quick series of
// setting changes never shows an old scenario's matrices. Tasks (startTask(): compare,
// import, exports) run beside it and hand their result to a callback on the GUI thread; an
// owned task (startOwnedTask(): a real run's simulation) is one whose owner alone cancels it.
// Nothing else in the GUI starts a thread.
#include <QObject>
#include <QString>
#include <QTimer>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "core/report/shard_summary.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "ui/jobs/job_progress.h"
#include "ui/jobs/result_tables.h"
#include "ui/render/view_set.h"

namespace shardlens::ui {

// Everything the views need, computed in the worker.
struct EvaluationResult {
  quint64 jobId = 0;
  Evaluation eval;  // a simulation, or a run file's (eval.provenance.file names it)
  ShardSummary shards;
  double seconds = 0;  // engine time, for the status bar
  QString runPath;     // the run file as the user named it, when the result shows one
  // A run file of several epochs: every epoch's result (this one among them, at epochIndex),
  // so stepping through them costs nothing. The list does not own them: a result kept from
  // it must share the ownership of the result it came from, ResultPtr(from, epochs->at(k).get()).
  std::shared_ptr<const std::vector<std::shared_ptr<const EvaluationResult>>> epochs;
  size_t epochIndex = 0;
  // The heatmaps for the view request current when the job started (the shown epoch's only):
  // prepared here so the GUI thread only swaps them in.
  render::ViewSetPtr views;
  // What the Most confused and Metrics docks list, prepared here too (every epoch's): the GUI
  // thread only fills their tables. Null in a result made without the runner (tests).
  ResultTablesPtr tables;
};
using ResultPtr = std::shared_ptr<const EvaluationResult>;

class EvaluationRunner : public QObject {
  Q_OBJECT
 public:
  explicit EvaluationRunner(QObject* parent = nullptr);
  ~EvaluationRunner() override;

  // What the views show: the views' job prepares its heatmaps for it (MatrixPanel sets it).
  void setViewRequest(const render::ViewRequest& request) { m_viewRequest = request; }

  quint64 start(const Scenario& s);
  // Loads and diagnoses a run file (.slrun) in the worker; same signals as start().
  quint64 startRun(const QString& path);
  // The main window's Cancel: cancels the views' job and every task but the owned ones.
  void cancel();
  // A task beside the views' job, which it neither cancels nor replaces: `work(progress)`
  // runs in a worker; on the GUI thread its result goes to `done`, its error message to
  // `failed`, or, when it was cancelled (cancel(), cancelTask()), `cancelled` is called if
  // given; none is called when `context` is gone. taskStarted / taskEnded bracket it (the
  // status bar).
  template <class Compute, class Deliver>
  quint64 startTask(QObject* context, const QString& stage, Compute work, Deliver done,
                    std::function<void(const QString&)> failed,
                    std::function<void()> cancelled = {});
  // The same, for a task with a Cancel of its own (a real run's simulation, its dialog's):
  // only cancelTask() or the runner's end cancels it, never the main window's cancel().
  template <class Compute, class Deliver>
  quint64 startOwnedTask(QObject* context, const QString& stage, Compute work, Deliver done,
                         std::function<void(const QString&)> failed,
                         std::function<void()> cancelled = {});
  // Cancels one task (its owner's Cancel); the others and the views' job go on.
  void cancelTask(quint64 task);
  int tasksRunning() const { return int(m_tasks.size()); }
  // Forgets loaded datasets, so the next start rereads files changed on disk.
  void clearCache();
  bool busy() const { return m_running > 0; }
  quint64 latestJob() const { return m_latest; }
  // Blocks until no job runs (tests, shutdown).
  void waitIdle();

 signals:
  void started(quint64 job);
  void progress(quint64 job, const QString& stage, double fraction);
  void finished(shardlens::ui::ResultPtr result);
  void failed(quint64 job, const QString& message);
  void cancelled(quint64 job);
  void taskStarted(quint64 task, const QString& stage);
  void taskEnded(quint64 task);

 private:
  using Work = std::function<std::shared_ptr<EvaluationResult>(JobProgress*)>;
  quint64 launch(Work work);
  void deliver(quint64 job, ResultPtr result, const QString& error, bool wasCancelled);
  // A task's work returns what to do with its result on the GUI thread.
  using TaskWork = std::function<std::function<void()>(JobProgress*)>;
  template <class Compute, class Deliver>
  static TaskWork taskWork(Compute work, Deliver done);
  quint64 launchTask(QObject* context, const QString& stage, TaskWork work,
                     std::function<void(const QString&)> failed, std::function<void()> cancelled,
                     bool owned);
  void endTask(quint64 task);
  std::shared_ptr<const DatasetInputs> inputsFor(const Scenario& s, Progress* progress);

  render::ViewRequest m_viewRequest;
  quint64 m_latest = 0;
  int m_running = 0;
  std::shared_ptr<JobProgress> m_current;
  QTimer m_poll;
  quint64 m_lastTask = 0;
  struct Task {
    std::shared_ptr<JobProgress> progress;
    bool owned = false;  // cancelled by cancelTask() alone
  };
  std::map<quint64, Task> m_tasks;  // running tasks
  // Loaded datasets and predictions by (dataset, predictor) spec, so toggling a sampler or
  // sync setting does not reload or re-predict.
  std::mutex m_cacheMutex;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const DatasetInputs>> m_cache;
  // The last simulation delivered, while the window still shows it: the next start() takes
  // over what its setting change leaves unchanged (the plan, the per-rank counts, the shard
  // summary), so a sync or counter toggle does not count every sample again. Weak: it
  // holds no matrices the window has let go.
  std::weak_ptr<const EvaluationResult> m_lastSimulation;
};

template <class Compute, class Deliver>
EvaluationRunner::TaskWork EvaluationRunner::taskWork(Compute work, Deliver done) {
  using Result = std::decay_t<std::invoke_result_t<Compute&, JobProgress*>>;
  return [work = std::move(work), done = std::move(done)](JobProgress* p) -> std::function<void()> {
    auto result = std::make_shared<Result>(work(p));
    return [done, result] { done(std::move(*result)); };
  };
}

template <class Compute, class Deliver>
quint64 EvaluationRunner::startTask(QObject* context, const QString& stage, Compute work,
                                    Deliver done, std::function<void(const QString&)> failed,
                                    std::function<void()> cancelled) {
  return launchTask(context, stage, taskWork(std::move(work), std::move(done)), std::move(failed),
                    std::move(cancelled), false);
}

template <class Compute, class Deliver>
quint64 EvaluationRunner::startOwnedTask(QObject* context, const QString& stage, Compute work,
                                         Deliver done, std::function<void(const QString&)> failed,
                                         std::function<void()> cancelled) {
  return launchTask(context, stage, taskWork(std::move(work), std::move(done)), std::move(failed),
                    std::move(cancelled), true);
}

}  // namespace shardlens::ui

Q_DECLARE_METATYPE(shardlens::ui::ResultPtr)

#include "ui/jobs/evaluation_runner.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPointer>
#include <QThread>
#include <QtConcurrent>
#include <future>

#include "core/runfile/run_evaluation.h"
#include "core/sim/validations.h"
#include "core/vocabulary/types.h"

namespace shardlens::ui {

EvaluationRunner::EvaluationRunner(QObject* parent) : QObject(parent) {
  qRegisterMetaType<ResultPtr>();
  m_poll.setInterval(50);
  connect(&m_poll, &QTimer::timeout, this, [this] {
    if (m_current) emit progress(m_latest, m_current->stage(), m_current->fraction());
  });
}

EvaluationRunner::~EvaluationRunner() {
  cancel();
  for (auto& [task, running] : m_tasks) running.progress->cancel();  // the owned ones too
  waitIdle();
}

std::shared_ptr<const DatasetInputs> EvaluationRunner::inputsFor(const Scenario& s,
                                                                 Progress* progress) {
  const auto key = std::make_pair(s.dataset, s.predictor);
  {
    std::lock_guard lock(m_cacheMutex);
    if (auto it = m_cache.find(key); it != m_cache.end()) return it->second;
  }
  auto inputs = load_inputs(s, progress);
  std::lock_guard lock(m_cacheMutex);
  // Keep the last few only: a 100M-sample dataset is 400 MB of keys.
  if (m_cache.size() >= 4) m_cache.clear();
  m_cache[key] = inputs;
  return inputs;
}

namespace {

// `sameCounts`: views of an evaluation with the same per-rank matrices, or null.
render::ViewSetPtr viewsOf(const Evaluation& e, const render::ViewRequest& request,
                           JobProgress* progress, const render::ViewSet* sameCounts = nullptr) {
  step(progress, "preparing the views", 0.0);
  render::ViewSetPtr views = render::prepareViews(
      e, request, [progress] { return progress->cancelled(); }, sameCounts);
  if (!views) throw Cancelled();
  return views;
}

}  // namespace

quint64 EvaluationRunner::start(const Scenario& s) {
  ResultPtr earlier = m_lastSimulation.lock();
  return launch([this, s, request = m_viewRequest, earlier](JobProgress* prog) {
    auto r = std::make_shared<EvaluationResult>();
    const Evaluation* before = earlier ? &earlier->eval : nullptr;
    // Several validations per epoch: the epoch's last one, with what they share.
    r->eval = std::move(simulate_validations(s, inputsFor(s, prog), prog, before).back());
    // The shard strip reads the plan's records alone; the rank views the per-rank counts.
    const bool samePlan = before && r->eval.plan == before->plan;
    r->shards = samePlan ? earlier->shards : summarizeShards(r->eval, prog);
    const bool sameCounts =
        samePlan && reusable_counts(*before, r->eval.scenario(), *r->eval.inputs);
    // The docks' tables and the heatmaps read the evaluation alone: on a second core, the
    // tables while the views are made (a future left by a throw is waited for).
    auto tables = std::async(std::launch::async, [&r, prog] { return tablesOf(r->eval, prog); });
    r->views = viewsOf(r->eval, request, prog, sameCounts ? earlier->views.get() : nullptr);
    r->tables = tables.get();
    return r;
  });
}

namespace {

// The epochs of one run file, owned together. Every result handed out shares ownership of
// the whole set (an aliasing shared_ptr), and each result's `epochs` lists its siblings
// without owning them: the set lives while any of its epochs is shown and is freed after.
// (Results that owned the list that owned them were a cycle: every run opened was leaked.)
struct RunEpochs {
  std::vector<EvaluationResult> results;
  std::vector<ResultPtr> views;  // non-owning; take one with ResultPtr(shown, view.get())
};

}  // namespace

quint64 EvaluationRunner::startRun(const QString& path) {
  return launch([path, request = m_viewRequest](JobProgress* prog) {
    const std::string file = path.toStdString();
    step(prog, "reading run file", 0.0);
    std::vector<Evaluation> evals = load_run_evaluations(file);
    auto set = std::make_shared<RunEpochs>();
    set->results.resize(evals.size());
    for (size_t k = 0; k < evals.size(); ++k) {
      step(prog, "diagnosing", 0.5 + 0.5 * double(k) / double(evals.size()));
      EvaluationResult& r = set->results[k];
      r.eval = std::move(evals[k]);
      // Images and subsets need the dataset's labels; a run opened elsewhere does without.
      attach_dataset_labels(r.eval);
      r.shards = summarizeShards(r.eval, prog);
      r.tables = tablesOf(r.eval, prog);
      r.runPath = path;
      r.epochIndex = k;
      set->views.push_back(ResultPtr(ResultPtr(), &r));
    }
    const std::shared_ptr<const std::vector<ResultPtr>> siblings(std::shared_ptr<void>(),
                                                                 &set->views);
    for (EvaluationResult& r : set->results) r.epochs = siblings;
    // The epoch shown first; the others are prepared when stepped to.
    set->results.front().views = viewsOf(set->results.front().eval, request, prog);
    return std::shared_ptr<EvaluationResult>(set, &set->results.front());
  });
}

quint64 EvaluationRunner::launch(Work work) {
  if (m_current) m_current->cancel();
  const quint64 job = ++m_latest;
  auto prog = std::make_shared<JobProgress>();
  m_current = prog;
  ++m_running;
  m_poll.start();
  emit started(job);
  QPointer<EvaluationRunner> self(this);
  (void)QtConcurrent::run([self, job, prog, work = std::move(work)] {
    ResultPtr result;
    QString error;
    bool wasCancelled = false;
    try {
      QElapsedTimer timer;
      timer.start();
      auto r = work(prog.get());
      r->jobId = job;
      r->seconds = timer.nsecsElapsed() / 1e9;
      result = std::move(r);
    } catch (const Cancelled&) {
      wasCancelled = true;
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    // Hand over on the GUI thread; the runner may be gone by then.
    QMetaObject::invokeMethod(
        qApp,
        [self, job, result, error, wasCancelled] {
          if (self) self->deliver(job, result, error, wasCancelled);
        },
        Qt::QueuedConnection);
  });
  return job;
}

void EvaluationRunner::deliver(quint64 job, ResultPtr result, const QString& error,
                               bool wasCancelled) {
  --m_running;
  if (m_running == 0) m_poll.stop();
  if (job != m_latest) return;  // stale: a newer job owns the views
  m_current.reset();
  if (wasCancelled) {
    emit cancelled(job);
  } else if (!error.isEmpty()) {
    emit failed(job, error);
  } else {
    if (!result->eval.is_run()) m_lastSimulation = result;
    emit finished(result);
  }
}

quint64 EvaluationRunner::launchTask(QObject* context, const QString& stage, TaskWork work,
                                     std::function<void(const QString&)> failed,
                                     std::function<void()> cancelled, bool owned) {
  const quint64 task = ++m_lastTask;
  auto prog = std::make_shared<JobProgress>();
  m_tasks[task] = Task{prog, owned};
  ++m_running;
  emit taskStarted(task, stage);
  QPointer<EvaluationRunner> self(this);
  QPointer<QObject> receiver(context);
  (void)QtConcurrent::run([self, receiver, task, prog, work = std::move(work),
                           failed = std::move(failed), cancelled = std::move(cancelled)] {
    std::function<void()> done;
    QString error;
    bool wasCancelled = false;
    try {
      done = work(prog.get());
    } catch (const Cancelled&) {
      wasCancelled = true;
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        qApp,
        [self, receiver, task, prog, done, error, wasCancelled, failed, cancelled] {
          if (self) self->endTask(task);
          if (!receiver) return;
          if (wasCancelled || prog->cancelled()) {
            if (cancelled) cancelled();
          } else if (!error.isEmpty()) {
            failed(error);
          } else {
            done();
          }
        },
        Qt::QueuedConnection);
  });
  return task;
}

void EvaluationRunner::endTask(quint64 task) {
  if (--m_running == 0) m_poll.stop();
  if (m_tasks.erase(task)) emit taskEnded(task);
}

void EvaluationRunner::cancelTask(quint64 task) {
  if (auto it = m_tasks.find(task); it != m_tasks.end()) it->second.progress->cancel();
}

void EvaluationRunner::clearCache() {
  std::lock_guard lock(m_cacheMutex);
  m_cache.clear();
  m_lastSimulation.reset();
}

void EvaluationRunner::cancel() {
  if (m_current) m_current->cancel();
  for (auto& [task, running] : m_tasks)
    if (!running.owned) running.progress->cancel();
}

void EvaluationRunner::waitIdle() {
  while (m_running > 0) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(1);
  }
}

}  // namespace shardlens::ui

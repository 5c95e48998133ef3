#include "ui/models/followed_runs.h"

#include <QElapsedTimer>
#include <algorithm>
#include <tuple>

#include "core/runfile/run_evaluation.h"

namespace shardlens::ui {

FollowedFile loadFollowedFile(const QString& path, JobProgress* progress) {
  QElapsedTimer timer;
  timer.start();
  step(progress, "reading run file", 0.0);
  std::vector<Evaluation> evals = load_run_evaluations(path.toStdString());
  FollowedFile file;
  file.path = path;
  for (size_t k = 0; k < evals.size(); ++k) {
    step(progress, "diagnosing", 0.5 + 0.5 * double(k) / double(evals.size()));
    auto r = std::make_shared<EvaluationResult>();
    r->eval = std::move(evals[k]);
    // Images and subsets need the dataset's labels; a run opened elsewhere does without.
    attach_dataset_labels(r->eval);
    r->shards = summarizeShards(r->eval, progress);
    r->tables = tablesOf(r->eval, progress);
    r->runPath = path;
    file.results.push_back(std::move(r));
  }
  for (auto& r : file.results) r->seconds = timer.nsecsElapsed() / 1e9;
  return file;
}

FollowedRuns::FollowedRuns() : m_owned(std::make_shared<Owned>()) {}

namespace {

// Training order: a test after the validations of its epoch; the order of arrival last.
auto trainingKey(const EvaluationResult& r, uint64_t landed) {
  const Evaluation& e = r.eval;
  const bool validation = e.meta.stage.empty() || e.meta.stage == "validate";
  return std::make_tuple(e.epoch(), !validation, e.validation(), e.dataloader(), landed);
}

}  // namespace

size_t FollowedRuns::add(FollowedFile file) {
  std::erase_if(m_order, [&](const Entry& e) { return e.path == file.path; });
  const size_t brought = file.results.size();
  for (auto& r : file.results) {
    m_owned->results.push_back(r);
    m_order.push_back(Entry{std::move(r), file.path, ++m_landed});
  }
  std::stable_sort(m_order.begin(), m_order.end(), [](const Entry& a, const Entry& b) {
    return trainingKey(*a.result, a.landed) < trainingKey(*b.result, b.landed);
  });
  ++m_filesAdded;
  relink();
  return brought;
}

void FollowedRuns::relink() {
  // Non-owning entries, as a run file's (evaluation_runner.cpp): a result kept from the list
  // shares the ownership of the result it came from.
  auto list = std::make_shared<std::vector<ResultPtr>>();
  for (const Entry& e : m_order) list->push_back(ResultPtr(ResultPtr(), e.result.get()));
  m_owned->lists.push_back(list);
  for (size_t k = 0; k < m_order.size(); ++k) {
    EvaluationResult& r = *m_order[k].result;
    r.epochs = list;
    r.epochIndex = k;
    r.eval.provenance.epochs = m_order.size();
    r.eval.provenance.epoch_index = k;
  }
}

ResultPtr FollowedRuns::at(size_t k) const {
  return ResultPtr(m_owned, m_order.at(k).result.get());
}

ResultPtr FollowedRuns::newest() const {
  if (m_order.empty()) return nullptr;
  const auto last =
      std::max_element(m_order.begin(), m_order.end(),
                       [](const Entry& a, const Entry& b) { return a.landed < b.landed; });
  return ResultPtr(m_owned, last->result.get());
}

bool FollowedRuns::holds(const EvaluationResult* result) const {
  return result && std::any_of(m_order.begin(), m_order.end(),
                               [result](const Entry& e) { return e.result.get() == result; });
}

}  // namespace shardlens::ui

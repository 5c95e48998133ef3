#include "ui/models/shown_source.h"

#include <QFileInfo>

#include "core/evaluation/caption.h"
#include "ui/render/shown_text.h"

namespace shardlens::ui {

ShownSource::ShownSource(QObject* parent) : QObject(parent) {
  setObjectName(QStringLiteral("shownSource"));
}

bool ShownSource::showingEpochs() const {
  return showingRun() && m_result && m_result->epochs && m_result->epochs->size() > 1;
}

void ShownSource::show(ResultPtr result) {
  m_requested = result;
  m_result = std::move(result);
  if (!m_result->eval.provenance.file.empty()) {
    m_runPath = m_result->runPath;
    emit runShown(m_result);
  } else if (showingRun()) {
    m_runPath.clear();
    emit runLeft();
  }
  emit shown(m_result);
}

bool ShownSource::leaveRun() {
  if (!showingRun()) return false;
  m_runPath.clear();
  emit runLeft();
  return true;
}

ResultPtr ShownSource::epochAfter(int delta) const {
  return epochAfter(m_requested, delta);
}

ResultPtr ShownSource::epochAfter(const ResultPtr& shown, int delta) {
  if (!shown || !shown->epochs || shown->epochs->size() < 2) return nullptr;
  const auto& all = *shown->epochs;
  const int n = int(all.size());
  const int next = ((int(shown->epochIndex) + delta) % n + n) % n;
  // Shares the ownership of the run's epochs that the shown result holds (evaluation_runner).
  return ResultPtr(shown, all[size_t(next)].get());
}

QString ShownSource::shownName() const {
  if (showingRun()) return QFileInfo(m_runPath).fileName();
  return m_result ? QString::fromStdString(m_result->eval.scenario().name) : QString();
}

QString ShownSource::title() const {
  if (showingRun()) return QFileInfo(m_runPath).fileName();
  // The one caption policy (core/evaluation/caption.h), of what the views show: this
  // scenario's simulation on screen, with the settings and epoch it actually had; the
  // scenario alone before its first (or after a run was left).
  const bool simulated =
      m_result && !m_result->eval.is_run() && m_result->eval.scenario().name == m_scenario.name;
  const Scenario& s = simulated ? m_result->eval.scenario() : m_scenario;
  if (s.title.empty() && s.name.empty() && !title_is_stale(s)) return tr("Untitled scenario");
  return shownText(simulated ? evaluation_title(m_result->eval) : scenario_title(s));
}

QString ShownSource::filePath() const {
  return showingRun() ? m_runPath : m_scenarioPath;
}

}  // namespace shardlens::ui

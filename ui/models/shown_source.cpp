#include "ui/models/shown_source.h"

#include <QFileInfo>

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
  const std::string& name = m_scenario.title.empty() ? m_scenario.name : m_scenario.title;
  return name.empty() ? tr("Untitled scenario") : QString::fromStdString(name);
}

QString ShownSource::filePath() const {
  return showingRun() ? m_runPath : m_scenarioPath;
}

}  // namespace shardlens::ui

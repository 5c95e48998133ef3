#include "ui/jobs/job_progress.h"

namespace shardlens::ui {

void JobProgress::report(std::string_view stage, double fraction) {
  m_fraction.store(fraction, std::memory_order_relaxed);
  std::lock_guard lock(m_mutex);
  if (m_stage != stage) m_stage.assign(stage);
}

QString JobProgress::stage() const {
  std::lock_guard lock(m_mutex);
  return QString::fromStdString(m_stage);
}

}  // namespace shardlens::ui

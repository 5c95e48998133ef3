#pragma once
// The engine's Progress interface for a background job: the worker thread reports, the GUI
// thread polls (a timer reads the latest stage and fraction), and cancel is a flag the
// engine checks between steps.
#include <QString>
#include <atomic>
#include <mutex>
#include <string>

#include "core/vocabulary/progress.h"

namespace shardlens::ui {

class JobProgress : public Progress {
 public:
  void report(std::string_view stage, double fraction) override;
  bool cancelled() const override { return m_cancelled.load(std::memory_order_relaxed); }
  void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
  QString stage() const;
  double fraction() const { return m_fraction.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> m_cancelled{false};
  std::atomic<double> m_fraction{0.0};
  mutable std::mutex m_mutex;
  std::string m_stage;
};

}  // namespace shardlens::ui

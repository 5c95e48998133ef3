#pragma once
// A progress bar on stderr when it is a terminal; silent otherwise (pipes, CI logs).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "core/model/progress.h"

namespace shardlens::cli {

class TerminalProgress : public Progress {
 public:
  TerminalProgress() : m_enabled(isatty(STDERR_FILENO) == 1) {}
  ~TerminalProgress() override { finish(); }

  void report(std::string_view stage, double fraction) override {
    if (!m_enabled) return;
    std::lock_guard lock(m_mutex);
    const auto now = std::chrono::steady_clock::now();
    if (now - m_last < std::chrono::milliseconds(100) && fraction < 1.0) return;
    m_last = now;
    const int width = 30;
    const int filled = static_cast<int>(fraction * width);
    std::fprintf(stderr, "\r%-14.*s [%s%s] %3d%%", static_cast<int>(stage.size()), stage.data(),
                 std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(width - filled), ' ').c_str(),
                 static_cast<int>(fraction * 100));
    m_drawn = true;
  }

  void finish() {
    if (m_drawn) std::fprintf(stderr, "\r%60s\r", "");
    m_drawn = false;
  }

 private:
  bool m_enabled;
  bool m_drawn = false;
  std::mutex m_mutex;
  std::chrono::steady_clock::time_point m_last{};
};

}  // namespace shardlens::cli

#pragma once
// Progress on stderr: a bar when it is a terminal (drawn by rank 0 only, when the ranks of a
// real run share one); with SHARDLENS_PROGRESS=lines, as the GUI's Run for real sets it, one
// line per update that a parent process reads:
//   shardlens-progress RANK FRACTION STAGE
// (RANK as the launcher gives it: torchrun, srun, mpirun; -1 for a process that is not a
// rank); silent otherwise (pipes, CI logs).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/platform/launcher_env.h"
#include "core/vocabulary/progress.h"

namespace shardlens::cli {

class TerminalProgress : public Progress {
 public:
  TerminalProgress() {
    const char* mode = std::getenv("SHARDLENS_PROGRESS");
    m_lines = mode && std::strcmp(mode, "lines") == 0;
    try {
      if (const auto place = detect_rank_environment(process_environment())) m_rank = place->rank;
    } catch (const std::exception&) {
      // Malformed launcher variables: `run` itself reports them; progress just stays generic.
    }
    m_enabled = m_lines || (isatty(STDERR_FILENO) == 1 && m_rank <= 0);
  }
  ~TerminalProgress() override { finish(); }

  void report(std::string_view stage, double fraction) override {
    if (!m_enabled) return;
    std::lock_guard lock(m_mutex);
    const auto now = std::chrono::steady_clock::now();
    if (now - m_last < std::chrono::milliseconds(100) && fraction < 1.0) return;
    m_last = now;
    if (m_lines) {
      std::fprintf(stderr, "shardlens-progress %d %.4f %.*s\n", m_rank, fraction,
                   static_cast<int>(stage.size()), stage.data());
      std::fflush(stderr);
      return;
    }
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
  bool m_enabled = false;
  bool m_lines = false;
  int m_rank = -1;
  bool m_drawn = false;
  std::mutex m_mutex;
  std::chrono::steady_clock::time_point m_last{};
};

}  // namespace shardlens::cli

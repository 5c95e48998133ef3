#pragma once
// Progress and cancel: the engine reports through this small interface; the GUI adapts it
// to a progress bar, the CLI to a terminal bar. Implementations must be thread-safe for
// report() being called from the worker thread.
#include <string_view>

#include "core/vocabulary/types.h"

namespace shardlens {

class Progress {
 public:
  virtual ~Progress() = default;
  // fraction in [0, 1] of the named stage.
  virtual void report(std::string_view stage, double fraction) { (void)stage, (void)fraction; }
  virtual bool cancelled() const { return false; }
};

// Reports and throws Cancelled when asked to stop; safe with a null sink.
inline void step(Progress* progress, std::string_view stage, double fraction) {
  if (!progress) return;
  if (progress->cancelled()) throw Cancelled();
  progress->report(stage, fraction);
}

}  // namespace shardlens

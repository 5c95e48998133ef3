#pragma once
// `simulate --like RUN.slrun`: the simulation of a recorded run's own settings
// (core/sim/recorded_run_simulation.h), flags given on top, compared with the run per rank
// and synced.
#include <CLI/CLI.hpp>
#include <string>

#include "app/cli/engine_flags.h"

namespace shardlens::cli {

// Prints the comparison of every evaluation of the run (only --epoch's, when given) with its
// simulation; sets the exit code: 0 when every one equals the run, 1 otherwise.
void run_like(const CLI::App& cmd, const EngineFlags& flags, const std::string& run_file);

}  // namespace shardlens::cli

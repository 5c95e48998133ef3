#pragma once
// Child processes of this program: starting a rank process with its launcher variables,
// polling, terminating and killing it, and how it ended. POSIX only; nothing of a run's
// protocol.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/platform/store.h"

namespace shardlens {

// How a process ended: its exit code, or the signal that killed it.
struct ExitStatus {
  int code = 0;
  int signal = 0;  // non-zero: killed by this signal
  bool ok() const { return signal == 0 && code == 0; }
};
ExitStatus exit_status_of(int wait_status);  // from waitpid's status
// "exited with status 3", "was killed by signal 9 (Killed)".
std::string describe_status(const ExitStatus& status);

// A started rank process.
class RankProcess {
 public:
  virtual ~RankProcess() = default;
  // How it ended, once it has (and is reaped); nullopt while it runs. Does not block.
  virtual std::optional<ExitStatus> poll() = 0;
  // Kills it (SIGKILL); poll() reports the end once it has happened.
  virtual void kill() = 0;
  // Asks it to end (SIGTERM), as a cancelled run does; kill() is the fallback.
  virtual void terminate() { kill(); }
};

// Starts `exe` with argv `args` as rank `rank` of `world` on this machine: this process's
// environment with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE and SHARDLENS_LAUNCHER=1
// set (and any MASTER_ADDR, MASTER_PORT, SHARDLENS_STORE_FILE of its own dropped), plus
// `store_env` ("NAME=value": how the rank finds the store). The process is killed and
// reaped if the handle goes away while it runs. Throws RunFailure when it cannot start.
std::unique_ptr<RankProcess> spawn_rank(const std::string& exe,
                                        const std::vector<std::string>& args, int rank, int world,
                                        const std::vector<std::string>& store_env);

// This process's argv (/proc/self/cmdline).
std::vector<std::string> own_command_line();

}  // namespace shardlens

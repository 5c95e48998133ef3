// `shardlens-cli run`: a real multi-rank evaluation (LibTorch, c10d Gloo).
#include <memory>

#include "app/cli/commands.h"
#include "core/types.h"
#include "shardlens/config.h"

namespace shardlens::cli {

void register_run(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("run", "Evaluate a TorchScript model with real ranks (Gloo)");
  cmd->allow_extras();
  cmd->callback([] {
    throw InputError("run: this build of ShardLens has no LibTorch; rebuild with LibTorch "
                     "(libtorch-dev) to run real evaluations");
  });
}

}  // namespace shardlens::cli

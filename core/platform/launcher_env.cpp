#include "core/platform/launcher_env.h"

#include <cstdlib>

#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

struct Scheme {
  const char* launcher;
  const char* rank;
  const char* world;
  const char* local_rank;  // may be absent: then the rank itself (one node)
};

// In the order they are tried. RANK/WORLD_SIZE first: torchrun sets them inside Slurm and
// MPI jobs too, and they are what env:// reads.
constexpr Scheme kSchemes[] = {
    {"env", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
};

}  // namespace

int env_integer(const EnvLookup& env, const char* name, int lo, int hi) {
  const std::string text = *env(name);
  try {
    size_t used = 0;
    const long v = std::stol(text, &used);
    if (used == text.size() && v >= lo && v <= hi) return static_cast<int>(v);
  } catch (const std::exception&) {
  }
  throw InputError("environment variable " + std::string(name) + "='" + text +
                   "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                   "]");
}

EnvLookup process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
}

std::optional<RankEnvironment> detect_rank_environment(const EnvLookup& env) {
  for (const Scheme& s : kSchemes) {
    const bool has_rank = env(s.rank).has_value(), has_world = env(s.world).has_value();
    if (!has_rank && !has_world) continue;
    if (std::string(s.launcher) == "slurm" && !env("SLURM_STEP_ID") && !env("SLURM_STEPID"))
      continue;  // the batch script itself, not a task of srun
    if (!has_rank || !has_world) {
      throw InputError(std::string(s.rank) + " and " + s.world +
                       " must be set together (the launcher sets both)");
    }
    RankEnvironment r;
    r.world = env_integer(env, s.world, 1, kMaxWorldSize);
    r.rank = env_integer(env, s.rank, 0, r.world - 1);
    r.local_rank =
        env(s.local_rank) ? env_integer(env, s.local_rank, 0, kMaxWorldSize - 1) : r.rank;
    r.launcher = s.launcher;
    if (r.launcher == "env") {
      if (env("SHARDLENS_LAUNCHER"))
        r.launcher = "shardlens";
      else if (env("TORCHELASTIC_RUN_ID") || env("GROUP_RANK"))
        r.launcher = "torchrun";
    }
    return r;
  }
  return std::nullopt;
}

bool torchrun_agent_hosts_store(const EnvLookup& env) {
  const std::optional<std::string> v = env("TORCHELASTIC_USE_AGENT_STORE");
  return v && (*v == "True" || *v == "true" || *v == "1");
}

}  // namespace shardlens

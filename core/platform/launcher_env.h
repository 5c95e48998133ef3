#pragma once
// Who started this rank and where it sits, read from the environment as the launchers set
// it: torchrun (and anything else that sets RANK/WORLD_SIZE, as env:// expects), Slurm's
// srun (SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID), Open MPI's mpirun
// (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK) and MPICH/Intel MPI's PMI (PMI_RANK/PMI_SIZE,
// MPI_LOCALRANKID). RANK/WORLD_SIZE win when present, as torch.distributed's env:// reads
// only them. No LibTorch.
#include <functional>
#include <optional>
#include <string>

namespace shardlens {

struct RankEnvironment {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  // "shardlens" (our own launcher), "torchrun", "env" (RANK/WORLD_SIZE set by hand or by
  // another tool), "slurm", "openmpi" or "pmi". Recorded in the run file.
  std::string launcher;
};

using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The process environment (unset and empty both read as absent).
EnvLookup process_environment();

// The variable `name` (which must be set) as an integer in [lo, hi]; InputError naming it
// otherwise.
int env_integer(const EnvLookup& env, const char* name, int lo, int hi);

// This process's place in a run, or nullopt when no launcher started it (then it launches
// the ranks itself). Throws InputError on variables that are malformed or contradict each
// other, naming them. Slurm's variables count only inside a job step (SLURM_STEP_ID set, as
// srun sets it), so a launcher started once inside an sbatch script is not taken for rank 0.
std::optional<RankEnvironment> detect_rank_environment(const EnvLookup& env);

// Whether torchrun's agent hosts the run's store on MASTER_PORT, so that every rank, rank 0
// included, joins it as a c10d TCPStore client (TORCHELASTIC_USE_AGENT_STORE=True, as
// torchrun's static rendezvous sets it) instead of rank 0 hosting one.
bool torchrun_agent_hosts_store(const EnvLookup& env);

}  // namespace shardlens

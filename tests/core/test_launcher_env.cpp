// Where a rank sits, from each launcher's variables (core/platform/launcher_env.h), and which
// address its Gloo pairs bind (core/platform/bind_address.h).
#include <map>

#include <gtest/gtest.h>

#include "core/platform/bind_address.h"
#include "core/platform/launcher_env.h"
#include "core/vocabulary/types.h"

using namespace shardlens;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST(LauncherEnv, NoVariablesMeansThisProcessLaunches) {
  EXPECT_FALSE(detect_rank_environment(env_of({})).has_value());
}

TEST(LauncherEnv, EachLauncherIsRecognisedByItsOwnVariables) {
  struct Case {
    std::map<std::string, std::string> vars;
    int rank, world, local;
    const char* launcher;
  };
  const Case cases[] = {
      {{{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}}, 3, 8, 1, "env"},
      {{{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"TORCHELASTIC_RUN_ID", "x"}},
       3,
       8,
       1,
       "torchrun"},
      {{{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"SHARDLENS_LAUNCHER", "1"}}, 2, 4, 2, "shardlens"},
      {{{"SLURM_PROCID", "5"},
        {"SLURM_NTASKS", "6"},
        {"SLURM_LOCALID", "1"},
        {"SLURM_STEP_ID", "0"}},
       5,
       6,
       1,
       "slurm"},
      {{{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEPID", "3"}}, 1, 2, 1, "slurm"},
      {{{"OMPI_COMM_WORLD_RANK", "2"},
        {"OMPI_COMM_WORLD_SIZE", "4"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}},
       2,
       4,
       0,
       "openmpi"},
      {{{"PMI_RANK", "1"}, {"PMI_SIZE", "3"}}, 1, 3, 1, "pmi"},
      {{{"PMI_RANK", "1"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "0"}}, 1, 3, 0, "pmi"},
      // torchrun inside a Slurm step sets RANK/WORLD_SIZE, which win as env:// reads them.
      {{{"RANK", "7"},
        {"WORLD_SIZE", "16"},
        {"SLURM_PROCID", "1"},
        {"SLURM_NTASKS", "2"},
        {"SLURM_STEP_ID", "0"},
        {"GROUP_RANK", "1"}},
       7,
       16,
       7,
       "torchrun"},
  };
  for (const Case& c : cases) {
    const std::optional<RankEnvironment> r = detect_rank_environment(env_of(c.vars));
    ASSERT_TRUE(r.has_value()) << c.launcher;
    EXPECT_EQ(r->rank, c.rank) << c.launcher;
    EXPECT_EQ(r->world, c.world) << c.launcher;
    EXPECT_EQ(r->local_rank, c.local) << c.launcher;
    EXPECT_EQ(r->launcher, c.launcher);
  }
}

TEST(LauncherEnv, SlurmBatchScriptWithoutAStepIsNotARank) {
  EXPECT_FALSE(detect_rank_environment(
                   env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}}))
                   .has_value());
}

TEST(LauncherEnv, HalfSetOrMalformedVariablesAreNamed) {
  const std::map<std::string, std::string> bad[] = {
      {{"RANK", "0"}},
      {{"OMPI_COMM_WORLD_SIZE", "4"}},
      {{"RANK", "4"}, {"WORLD_SIZE", "4"}},
      {{"PMI_RANK", "x"}, {"PMI_SIZE", "2"}},
      {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "0"}, {"SLURM_STEP_ID", "0"}},
  };
  const char* named[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "RANK", "PMI_RANK", "SLURM_NTASKS"};
  for (size_t i = 0; i < std::size(bad); ++i) {
    try {
      detect_rank_environment(env_of(bad[i]));
      ADD_FAILURE() << "accepted case " << i;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(named[i]), std::string::npos) << e.what();
    }
  }
}

TEST(LauncherEnv, TorchrunAgentStoreIsRecognised) {
  EXPECT_TRUE(torchrun_agent_hosts_store(env_of({{"TORCHELASTIC_USE_AGENT_STORE", "True"}})));
  EXPECT_FALSE(torchrun_agent_hosts_store(env_of({{"TORCHELASTIC_USE_AGENT_STORE", "False"}})));
  EXPECT_FALSE(torchrun_agent_hosts_store(env_of({})));
}

TEST(BindAddress, LoopbackStaysLoopbackAndRoutesPickTheSourceAddress) {
  for (const char* local : {"127.0.0.1", "localhost", "127.0.1.1"}) {
    const BindChoice c = choose_bind_address(local, "");
    EXPECT_EQ(c.address, "127.0.0.1") << local;
    EXPECT_EQ(c.interface, "lo") << local;
  }
  // An interface named by the user wins over MASTER_ADDR.
  const BindChoice lo = choose_bind_address("192.0.2.1", "lo");
  EXPECT_EQ(lo.address, "127.0.0.1");
  EXPECT_EQ(interface_of_address("127.0.0.1"), "lo");
  EXPECT_EQ(interface_address("lo"), "127.0.0.1");
}

TEST(BindAddress, AMissingInterfaceOrUnresolvableMasterIsNamed) {
  try {
    choose_bind_address("127.0.0.1", "no-such-if0");
    ADD_FAILURE() << "accepted a missing interface";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-if0"), std::string::npos) << e.what();
  }
  try {
    choose_bind_address("no-such-host.invalid", "");
    ADD_FAILURE() << "accepted an unresolvable MASTER_ADDR";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-host.invalid"), std::string::npos) << e.what();
  }
}

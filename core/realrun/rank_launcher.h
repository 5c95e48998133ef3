#pragma once
// The processes of a real run (modes: core/realrun/real_run.h). The launcher starts W rank
// processes, waits for them with a deadline, names the ranks that failed and assembles the
// run file from what they published to the store; a rank, under the launcher or torchrun,
// connects and runs its part (rank_loop.h). Everything of LibTorch comes through
// RealRunServices, so none of this includes it.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset/labels.h"
#include "core/platform/process.h"
#include "core/realrun/rank_protocol.h"
#include "core/realrun/rank_services.h"
#include "core/realrun/real_run.h"
#include "core/runfile/runfile.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

struct RankEnd {
  ExitStatus status;
  bool killed_as_hung = false;  // still running at the deadline, so killed
  bool cancelled = false;       // still running when the run was cancelled, so terminated
};

// How long cancelled ranks get to end on SIGTERM before they are killed.
inline constexpr std::chrono::milliseconds kCancelGrace{3000};

// Polls every rank until all have ended. After the first failure the others get `grace`
// (the collective timeout plus a margin) to notice and exit; any still running then is
// killed and reported as hung. Once `cancelled` returns true every rank still running is
// terminated (and killed after kCancelGrace).
std::vector<RankEnd> wait_for_ranks(
    std::vector<std::unique_ptr<RankProcess>>& ranks, std::chrono::milliseconds grace,
    std::chrono::milliseconds poll_every = std::chrono::milliseconds(20),
    const std::function<bool()>& cancelled = {});

struct RankFailures {
  std::vector<int> failed;  // the root causes, in rank order
  std::string reason;       // every failed rank described, root causes first; "; " between
};

// The failed ranks of a launched run, from how they ended and what they published. Root
// causes are the ranks that never published their records (killed, crashed) or hung; ranks
// that failed after publishing only saw a collective break. Each is described as "rank R
// <how it ended>", with the error it published to the store in parentheses.
RankFailures describe_rank_failures(RankStore& store, const std::vector<RankEnd>& ends);

// What rank 0 under torchrun does before assembling: waits up to `timeout` for each rank's
// key_done in turn; ranks that did not finish and never published their records are failed
// ("rank R did not finish").
RankFailures await_ranks(RankStore& store, int world, std::chrono::milliseconds timeout);

// The run file from what the ranks of a run of `world` ranks over `labels` published to
// `store`. Ranks that published nothing get empty records and a zero matrix; the run is
// complete only when every rank finished, the reported matrix arrived and nothing failed.
// No expected matrix is stored: its records hold every prediction the run made, from which
// complete_evaluation builds it when every index was evaluated. Throws RunFailure when a
// rank published something unreadable.
RunFile assemble_run(RankStore& store, const RealRunConfig& config, const Labels& labels, int world,
                     const RankFailures& failures, const std::string& torch_version);

// real_run() over `services`: a rank when RANK and WORLD_SIZE are set, else the launcher.
// Throws InputError for bad input found before any rank starts.
RealRunResult real_run_with(const RealRunConfig& config, const RealRunServices& services,
                            Progress* progress = nullptr);

}  // namespace shardlens

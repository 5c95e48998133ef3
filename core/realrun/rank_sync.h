#pragma once
// A sync strategy performed for real: the collectives each strategy issues (as users write
// them with torch.distributed), then the engine's own arithmetic on what crossed the wire,
// so a real run and a simulation of the same per-rank data report the same matrix.
#include <cstdint>
#include <string>
#include <vector>

#include "core/evaluation/scenario.h"
#include "core/realrun/rank_services.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/records.h"

namespace shardlens {

// What one rank evaluated.
struct RankOutput {
  std::vector<Record> records;
  Matrix local;  // accumulated in the counter dtype, batch by batch
  int64_t batches = 0;
  bool loader_exhausted = true;  // the last batch evaluated was the loader's last one
  int64_t rank_batch_size = 0;   // the rank's batch size when not the loader's (Accelerate)
};

// The reported matrix, and a note when part of its arithmetic had to be the engine's
// instead of the collective's (a dtype the backend cannot all_reduce).
struct RealSync {
  Matrix reported;
  std::string note;
};

// Performs `scenario.sync` over `collectives` on every rank (all call it together).
// Collective failures propagate as the collectives throw them.
RealSync synchronize_for_real(RankCollectives& collectives, const Scenario& scenario,
                              const RankOutput& out, int world, int64_t dataset_size);

}  // namespace shardlens

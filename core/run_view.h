#pragma once
// A run file seen through the shape the desktop views read (an Evaluation): matrices, class
// names and counts, diagnosis and coverage, all from the run's records and matrices. A run
// has no shard plan and every prediction is known only when `expected` was stored, so the
// result carries no dataset keys and an empty plan (only n and world size are set): code
// that lists a cell's samples or draws the shard strip reads the records instead.
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine.h"
#include "core/runfile.h"

namespace shardlens {

// A run that ended before its sync (no synced matrix) still opens: its per-rank matrices and
// records are shown, `synced_missing` says why nothing was reported, and the diagnosis has one
// "incomplete-run" finding instead of row checks.
Evaluation evaluation_from_run(const RunFile& run, const std::string& origin);

// How often each dataset index was evaluated (saturating at 255), from the records.
std::vector<uint8_t> times_evaluated(const StoredRecords& records, int64_t dataset_size);

// "real, 4 ranks, complete" — the run's provenance in a few words.
std::string run_summary(const RunMeta& meta);

}  // namespace shardlens

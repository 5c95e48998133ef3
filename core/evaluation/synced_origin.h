#pragma once
// Where an evaluation's synced matrix came from. A report may only say what its records
// prove: a matrix the run reported can show a double or missing sync, a sum computed here
// from the ranks' matrices cannot, so every label, verdict and note names the origin.
#include <optional>
#include <string>
#include <string_view>

namespace shardlens {

struct RunMetadata;

enum class SyncedOrigin {
  Unknown,     // a run file written before the origin was recorded
  Simulated,   // the simulated frameworks' sync of the simulated ranks
  Recorded,    // what the run itself reported: a real run's sync, a dump's `reported` matrix
  SumOfRanks,  // the dumps recorded no reported matrix: the sum of the ranks, computed here
};

// "simulated", "recorded", "sum-of-ranks" (the meta.json value); "" for Unknown.
const char* to_string(SyncedOrigin origin);
std::optional<SyncedOrigin> parse_synced_origin(std::string_view text);
std::string synced_origin_choices();  // "simulated, recorded or sum-of-ranks"

// The recorded origin, else what the run's source implies: a simulation's sync is simulated
// and a real run's is its own; an imported file that did not record it stays Unknown.
SyncedOrigin synced_origin_of(const RunMetadata& meta);

}  // namespace shardlens

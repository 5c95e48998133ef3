#pragma once
// What the records show before any matrix is compared: coverage of every dataset index,
// duplicates within and across ranks, flagged padding and sanity records, the evaluation
// order, and each rank's exact counts. Computed once per evaluation and shared by the
// coverage views and the diagnosis: by walking the records (runs, imports), or straight from
// a simulation's shard plan, where the layout tells the same facts without touching most
// samples (stats_from_plan).
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "core/dataset/dataset_inputs.h"
#include "core/vocabulary/coverage.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/progress.h"
#include "core/vocabulary/records.h"

namespace shardlens {

struct ShardPlan;

inline constexpr size_t kMaxListedSamples = 50;

// Affected samples of one kind: a capped list, the full count and their classes.
struct SampleSet {
  std::vector<int64_t> samples;
  int64_t count = 0;
  std::set<int32_t> classes;
  void add(int64_t index, int32_t cls) {
    if (samples.size() < kMaxListedSamples) samples.push_back(index);
    ++count;
    if (cls >= 0) classes.insert(cls);
  }
};

struct RecordStats {
  // Exact bincount of each rank's records, nothing ignored. Empty when it equals the
  // accumulated per-rank matrices (a simulation's int64 counter with nothing ignored).
  std::vector<Matrix> exact_per_rank;
  // The accumulated per-rank matrices summed in rank order, when the caller has it already
  // (a simulation's int64 all-reduce is that sum); else the diagnosis sums them itself.
  std::optional<Matrix> per_rank_sum;
  // One count per distinct evaluated sample (its first evaluation outside the sanity
  // check); filled by the record walk, where no dataset inputs give it.
  std::optional<Matrix> distinct;
  std::vector<int64_t> rank_sizes;  // records per rank outside the sanity check
  Coverage times;                   // evaluations per dataset index, saturating at 255
  int64_t records = 0;
  int64_t invalid = 0;  // index outside [0, n) or target/prediction outside [0, C)
  SampleSet flagged_padding, flagged_sanity;
  SampleSet within_rank_duplicates;    // an index seen again by the same rank
  SampleSet cross_rank_duplicates;     // an index seen again by another rank
  int64_t cross_rank_at_rank_end = 0;  // of those, occurrences that are a rank's last record
  bool shuffled_order = false;         // some rank's indices are not in increasing order
};

// Walks every record once. `progress` moves rank by rank and is where cancel is honoured.
RecordStats collect_stats(const RecordSource& records, int64_t dataset_size, int32_t classes,
                          Progress* progress = nullptr);

// The same facts from a simulation's plan and inputs; nullopt when the plan's ranks walk
// different orders (diverged seeds), which only the record walk handles.
std::optional<RecordStats> stats_from_plan(const ShardPlan& plan, const DatasetInputs& inputs,
                                           Progress* progress = nullptr);

}  // namespace shardlens

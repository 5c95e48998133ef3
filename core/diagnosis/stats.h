#pragma once
// One pass over the records that gathers what the diagnosis classifies (internal).
#include <set>
#include <vector>

#include "core/diagnosis/diagnosis.h"

namespace shardlens::detail {

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
  std::vector<Matrix> per_rank;  // exact bincount of each rank's records (nothing ignored)
  std::vector<int64_t> rank_sizes;
  std::vector<uint8_t> times;  // evaluations per dataset index, saturating
  int64_t records = 0;
  int64_t invalid = 0;  // index outside [0, n) or target/prediction outside [0, C)
  SampleSet flagged_padding, flagged_sanity;
  SampleSet within_rank_duplicates;    // an index seen again by the same rank
  SampleSet cross_rank_duplicates;     // an index seen again by another rank
  int64_t cross_rank_at_rank_end = 0;  // of those, occurrences that are a rank's last record
  bool shuffled_order = false;         // some rank's indices are not in increasing order
};

RecordStats collect_stats(const DiagnosisInput& in, int32_t classes);

}  // namespace shardlens::detail

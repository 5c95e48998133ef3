#include "ui/cell_index.h"

#include <algorithm>
#include <unordered_set>

namespace shardlens::ui {
namespace {

// The dataset's samples of a cell (every prediction known).
std::vector<CellSample> datasetSamples(const DatasetInputs& in, int row, int col, size_t limit,
                                       int64_t* total) {
  std::vector<CellSample> out;
  int64_t n = 0;
  const int32_t key = row * in.classes() + col;
  for (size_t i = 0; i < in.keys.size(); ++i) {
    if (in.keys[i] != key) continue;
    if (out.size() < limit) out.push_back({int64_t(i), int64_t(i), -1, row, col, 0});
    ++n;
    if (!total && out.size() >= limit) break;
  }
  if (total) *total = n;
  return out;
}

}  // namespace

std::vector<CellSample> samplesOf(const Evaluation& e, SampleScope scope, int rank, int row,
                                  int col, size_t limit, int64_t* total) {
  if (scope == SampleScope::Expected && e.inputs)
    return datasetSamples(*e.inputs, row, col, limit, total);
  std::vector<CellSample> out;
  int64_t n = 0;
  const RecordSource& records = *e.records;
  const int world = records.world_size();
  if (scope == SampleScope::Rank && (rank < 0 || rank >= world)) return out;
  const int first = scope == SampleScope::Rank ? rank : 0;
  const int last = scope == SampleScope::Rank ? rank : world - 1;
  const bool distinct = scope == SampleScope::Expected;
  std::unordered_set<int64_t> seen;  // distinct indices only
  for (int k = first; k <= last; ++k) {
    const bool more = walk_records(records, k, [&](const Record& r, int64_t position) {
      if (r.target != row || r.prediction != col) return true;
      if (distinct && !seen.insert(r.index).second) return true;
      if (out.size() < limit)
        out.push_back({r.index, distinct ? r.index : position, distinct ? -1 : k, row, col,
                       distinct ? uint8_t(0) : r.flags});
      ++n;
      return total || out.size() < limit;
    });
    if (!more) break;
  }
  if (total) *total = n;
  return out;
}

}  // namespace shardlens::ui

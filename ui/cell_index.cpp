#include "ui/cell_index.h"

#include <algorithm>
#include <unordered_set>

namespace shardlens::ui {
namespace {

// Stops the walk early once enough samples are found and no total is wanted.
struct StopWalk {};

}  // namespace

std::vector<CellSample> datasetSamples(const Evaluation& e, int row, int col, size_t limit,
                                       int64_t* total) {
  std::vector<CellSample> out;
  int64_t n = 0;
  const auto& in = *e.inputs;
  const uint32_t key = uint32_t(row) * uint32_t(in.classes()) + uint32_t(col);
  for (size_t i = 0; i < in.keys.size(); ++i) {
    if (in.keys[i] != key) continue;
    if (out.size() < limit) out.push_back({int64_t(i), int64_t(i), -1, row, col, 0});
    ++n;
    if (!total && out.size() >= limit) break;
  }
  if (total) *total = n;
  return out;
}

std::vector<CellSample> rankSamples(const Evaluation& e, int rank, int row, int col, size_t limit,
                                    int64_t* total) {
  std::vector<CellSample> out;
  int64_t n = 0, position = 0;
  if (rank < 0 || rank >= int(e.plan.evaluated.size())) return out;
  const auto& in = *e.inputs;
  const uint32_t key = uint32_t(row) * uint32_t(in.classes()) + uint32_t(col);
  try {
    for_each_element(e.plan.evaluated[size_t(rank)].sequence, [&](int64_t index, uint8_t flags) {
      if (in.keys[size_t(index)] == key) {
        if (out.size() < limit) out.push_back({index, position, rank, row, col, flags});
        ++n;
        if (!total && out.size() >= limit) throw StopWalk{};
      }
      ++position;
    });
  } catch (const StopWalk&) {
  }
  if (total) *total = n;
  return out;
}

std::vector<CellSample> recordSamples(const StoredRecords& records, int rank, int row, int col,
                                      size_t limit, int64_t* total) {
  std::vector<CellSample> out;
  int64_t n = 0;
  const int first = rank < 0 ? 0 : rank;
  const int last = rank < 0 ? records.world_size() - 1 : std::min(rank, records.world_size() - 1);
  std::unordered_set<int64_t> seen;  // distinct indices only, for rank < 0
  for (int k = first; k <= last; ++k) {
    const auto& recs = records.ranks[size_t(k)];
    for (size_t i = 0; i < recs.size(); ++i) {
      const Record& r = recs[i];
      if (r.target != row || r.prediction != col) continue;
      if (rank < 0 && !seen.insert(r.index).second) continue;
      if (out.size() < limit)
        out.push_back(
            {r.index, int64_t(i), rank < 0 ? -1 : k, row, col, rank < 0 ? uint8_t(0) : r.flags});
      ++n;
      if (!total && out.size() >= limit) return out;
    }
  }
  if (total) *total = n;
  return out;
}

}  // namespace shardlens::ui

#include "ui/cell_index.h"

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

}  // namespace shardlens::ui

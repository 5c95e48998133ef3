#include "core/sim/engine.h"

#include <algorithm>

namespace shardlens {

SimulatedRecords::SimulatedRecords(std::shared_ptr<const DatasetInputs> inputs,
                                   std::shared_ptr<const ShardPlan> plan)
    : m_inputs(std::move(inputs)), m_plan(std::move(plan)) {
  // Accelerate's shards are one segment per batch: a read or a size must not walk them all.
  for (const EvaluatedRank& rank : m_plan->evaluated) {
    std::vector<int64_t> ends;
    ends.reserve(rank.sequence.segments.size());
    int64_t end = 0;
    for (const Segment& s : rank.sequence.segments) ends.push_back(end += s.count);
    m_ends.push_back(std::move(ends));
  }
}

int SimulatedRecords::world_size() const {
  return m_plan->world_size;
}

int64_t SimulatedRecords::rank_size(int rank) const {
  const auto& ends = m_ends[static_cast<size_t>(rank)];
  return ends.empty() ? 0 : ends.back();
}

void SimulatedRecords::read(int rank, int64_t offset, std::span<Record> out) const {
  const auto& segments = m_plan->evaluated[static_cast<size_t>(rank)].sequence.segments;
  const int32_t classes = m_inputs->classes();
  size_t written = 0;
  // The first segment that ends past `offset`; offset becomes relative to it.
  const auto& ends = m_ends[static_cast<size_t>(rank)];
  const size_t first = size_t(std::upper_bound(ends.begin(), ends.end(), offset) - ends.begin());
  if (first > 0) offset -= ends[first - 1];
  for (size_t i = first; i < segments.size(); ++i) {
    const Segment& s = segments[i];
    if (written == out.size()) break;
    if (offset >= s.count) {
      offset -= s.count;
      continue;
    }
    const Order& order = *s.order;
    for (int64_t k = offset; k < s.count && written < out.size(); ++k) {
      const int64_t pos = s.start + k * s.stride;
      const int64_t index = order.at(pos % order.n);
      const int32_t key = m_inputs->keys[static_cast<size_t>(index)];
      Record& r = out[written++];
      r.index = index;
      r.target = key / classes;
      r.prediction = key % classes;
      r.flags = static_cast<uint8_t>(s.flags | (pos >= order.n ? kPadding : 0));
      r.cells = m_inputs->cells ? static_cast<uint32_t>(index) : kOneCell;
    }
    offset = 0;
  }
}

}  // namespace shardlens

#include "ui/cell_index.h"

#include <algorithm>
#include <map>
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

// The records of a cell in a simulation, found from the dataset side instead of walking
// every record: the indices holding the cell's key (one sequential pass over the keys), the
// positions of those indices in each order (one sequential pass over the permutation, a
// bit test each), and the segments that reach those positions (arithmetic). At 10^8
// samples this is two streaming passes where a walk is 10^8 random reads. Returns false
// when the plan has a layout this does not cover (a segment that does not step forward).
bool simulatedCellSamples(const Evaluation& e, int first, int last, int row, int col,
                          std::vector<CellSample>& out, int64_t& n) {
  const DatasetInputs& in = *e.inputs;
  const ShardPlan& plan = *e.plan;
  for (int r = first; r <= last; ++r)
    for (const Segment& s : plan.evaluated[size_t(r)].sequence.segments)
      if (s.stride <= 0 || s.order->n != in.size()) return false;
  const int32_t key = row * in.classes() + col;
  const size_t size = in.keys.size();
  std::vector<uint64_t> holds((size + 63) / 64, 0);  // bit i: index i holds the key
  bool any = false;
  for (size_t i = 0; i < size; ++i) {
    if (in.keys[i] != key) continue;
    holds[i / 64] |= uint64_t(1) << (i % 64);
    any = true;
  }
  out.clear();
  n = 0;
  if (!any) return true;
  const auto held = [&](int64_t i) { return (holds[size_t(i) / 64] >> (size_t(i) % 64)) & 1; };
  // Positions of the held indices in each order the scope walks, ascending.
  std::map<const Order*, std::vector<int64_t>> positions;
  for (int r = first; r <= last; ++r)
    for (const Segment& s : plan.evaluated[size_t(r)].sequence.segments) {
      auto [it, fresh] = positions.try_emplace(s.order.get());
      if (!fresh) continue;
      const Order& o = *s.order;
      for (int64_t q = 0; q < o.n; ++q)
        if (held(o.at(q))) it->second.push_back(q);
    }
  struct Found {
    int rank;
    int64_t position;
    int64_t index;
    uint8_t flags;
  };
  std::vector<Found> found;
  for (int r = first; r <= last; ++r) {
    int64_t base = 0;  // the segment's first record's position in the rank
    for (const Segment& s : plan.evaluated[size_t(r)].sequence.segments) {
      const Order& o = *s.order;
      const int64_t end = s.start + (s.count - 1) * s.stride;  // last position walked
      for (const int64_t q : positions[&o]) {
        // Every walked position congruent to q modulo n: q itself, and q + n, q + 2n, ...
        // where the segment wraps round as padding.
        for (int64_t pos = q + (s.start > q ? (s.start - q + o.n - 1) / o.n * o.n : 0);
             s.count > 0 && pos <= end; pos += o.n) {
          if ((pos - s.start) % s.stride != 0) continue;
          found.push_back({r, base + (pos - s.start) / s.stride, o.at(q),
                           uint8_t(s.flags | (pos >= o.n ? kPadding : 0))});
        }
      }
      base += s.count;
    }
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.position < b.position;
  });
  n = int64_t(found.size());
  for (const Found& f : found)
    out.push_back({f.index, f.position, f.rank, row, col, f.flags});
  return true;
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
  if (!distinct && e.plan && e.inputs && simulatedCellSamples(e, first, last, row, col, out, n)) {
    if (out.size() > limit) out.resize(limit);
    if (total) *total = n;
    return out;
  }
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

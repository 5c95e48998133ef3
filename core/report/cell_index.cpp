#include "core/report/cell_index.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <unordered_set>

namespace shardlens {
namespace {

// What row `row` of `cells` adds to cell `key` (0: the sample does not reach it). Rows are
// short (the classes one image shows), so a scan beats an index.
int64_t countInRow(const CellTable& cells, int64_t row, uint32_t key) {
  const auto keys = cells.keys_of(row);
  const auto counts = cells.counts_of(row);
  int64_t n = 0;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) n += counts[i];
  return n;
}

// What a record adds to cell (row, col): its row of cells' count there, or 1 for a record
// that is one cell (classification) and sits on it.
int64_t recordCount(const Record& r, const CellTable* cells, int row, int col) {
  if (cells && r.cells != kOneCell)
    return countInRow(*cells, int64_t(r.cells),
                      uint32_t(row) * uint32_t(cells->classes) + uint32_t(col));
  return r.target == row && r.prediction == col ? 1 : 0;
}

// The dataset's samples of a cell (every prediction known).
std::vector<CellSample> datasetSamples(const DatasetInputs& in, int row, int col, size_t limit,
                                       int64_t* total) {
  std::vector<CellSample> out;
  int64_t n = 0;
  if (in.cells) {  // row i of the table is dataset index i
    const uint32_t key = uint32_t(row) * uint32_t(in.cells->classes) + uint32_t(col);
    for (int64_t i = 0; i < in.cells->rows(); ++i) {
      const int64_t count = countInRow(*in.cells, i, key);
      if (count == 0) continue;
      if (out.size() < limit) out.push_back({i, i, -1, row, col, 0, count});
      ++n;
      if (!total && out.size() >= limit) break;
    }
    if (total) *total = n;
    return out;
  }
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

// How many records of `row, col` the ranks [first, last] hold, when their accumulated
// matrices say it exactly: an int64 counter, and a row that was not ignored.
std::optional<int64_t> exactCellCount(const Evaluation& e, int first, int last, int row, int col) {
  if (e.scenario().dtype != CounterDtype::Int64 || row == e.meta.ignore_index) return std::nullopt;
  if (last >= int(e.per_rank.size())) return std::nullopt;
  double sum = 0;
  for (int r = first; r <= last; ++r) sum += e.per_rank[size_t(r)].at(row, col);
  return int64_t(sum);
}

// Runs f(begin, end) over [0, n) in two halves, the second on another core: the scans below
// are memory-bound, and two cores stream faster than one.
template <class F>
void inTwoHalves(int64_t n, F&& f) {
  if (n < (int64_t(1) << 20)) return f(int64_t(0), n);
  std::thread other([&] { f(n / 2, n); });
  f(int64_t(0), n / 2);
  other.join();
}

// A rare cell's records: its dataset indices (one sequential pass over the keys), their
// positions in each order the ranks walk (one sequential pass over the permutation, with a
// cache-resident filter in front of the exact test), then the segments that reach those
// positions (arithmetic), in walk order. A walk would read every record's key at random.
void rareCellSamples(const Evaluation& e, int first, int last, int32_t key, int row, int col,
                     std::vector<CellSample>& out) {
  const DatasetInputs& in = *e.inputs;
  const ShardPlan& plan = *e.plan;
  std::vector<int64_t> low, high;  // the cell's dataset indices, from each half, ascending
  inTwoHalves(in.size(), [&](int64_t begin, int64_t end) {
    auto& mine = begin == 0 ? low : high;
    const int32_t* keys = in.keys.data();
    constexpr int64_t kBlock = 64;  // a branch-free test per block vectorizes; hits are rare
    int64_t i = begin;
    for (; i + kBlock <= end; i += kBlock) {
      bool any = false;
      for (int64_t j = 0; j < kBlock; ++j) any |= keys[i + j] == key;
      if (!any) continue;
      for (int64_t j = 0; j < kBlock; ++j)
        if (keys[i + j] == key) mine.push_back(i + j);
    }
    for (; i < end; ++i)
      if (keys[i] == key) mine.push_back(i);
  });
  std::vector<int64_t> holders = std::move(low);
  holders.insert(holders.end(), high.begin(), high.end());
  constexpr size_t kFewHolders = 8;  // the block test below compares against exactly eight
  constexpr int kFilterBits = 19;    // 64 KiB: stays in L2 beside the streamed order
  const auto slot = [](int64_t i) {
    return (uint64_t(i) * 0x9E3779B97F4A7C15ull) >> (64 - kFilterBits);
  };
  std::vector<uint64_t> filter(size_t(1) << (kFilterBits - 6), 0);
  for (int64_t i : holders) filter[slot(i) >> 6] |= uint64_t(1) << (slot(i) & 63);
  const auto holds = [&](int64_t index) {
    const uint64_t h = slot(index);
    return ((filter[h >> 6] >> (h & 63)) & 1) &&
           std::binary_search(holders.begin(), holders.end(), index);
  };
  // Positions of the holders in each order the scope walks, ascending.
  std::vector<std::pair<const Order*, std::vector<int64_t>>> positions;
  for (int r = first; r <= last; ++r)
    for (const Segment& s : plan.evaluated[size_t(r)].sequence.segments) {
      const Order* o = s.order.get();
      if (std::any_of(positions.begin(), positions.end(), [&](auto& p) { return p.first == o; }))
        continue;
      std::vector<int64_t> lo, hi;
      inTwoHalves(o->n, [&](int64_t begin, int64_t end) {
        auto& mine = begin == 0 ? lo : hi;
        if (o->perm.empty()) {
          for (int64_t q = begin; q < end; ++q)
            if (holds(q)) mine.push_back(q);
          return;
        }
        const uint32_t* perm = o->perm.data();
        if (holders.size() <= kFewHolders) {
          // A handful of holders: compare each block against every one of them, branch-free
          // (the compiler vectorizes it), and look closer only at a block that matched.
          uint32_t few[kFewHolders];
          const size_t k = holders.size();
          for (size_t h = 0; h < kFewHolders; ++h) few[h] = uint32_t(holders[std::min(h, k - 1)]);
          constexpr int64_t kBlock = 64;
          int64_t q = begin;
          for (; q + kBlock <= end; q += kBlock) {
            uint32_t any = 0;
            for (int64_t j = 0; j < kBlock; ++j) {
              const uint32_t v = perm[q + j];
              any |= uint32_t(v == few[0]) | uint32_t(v == few[1]) | uint32_t(v == few[2]) |
                     uint32_t(v == few[3]) | uint32_t(v == few[4]) | uint32_t(v == few[5]) |
                     uint32_t(v == few[6]) | uint32_t(v == few[7]);
            }
            if (!any) continue;
            for (int64_t j = 0; j < kBlock; ++j)
              if (holds(int64_t(perm[q + j]))) mine.push_back(q + j);
          }
          for (; q < end; ++q)
            if (holds(int64_t(perm[q]))) mine.push_back(q);
          return;
        }
        for (int64_t q = begin; q < end; ++q)
          if (holds(int64_t(perm[q]))) mine.push_back(q);
      });
      lo.insert(lo.end(), hi.begin(), hi.end());
      positions.emplace_back(o, std::move(lo));
    }
  const auto positionsOf = [&](const Order* o) -> const std::vector<int64_t>& {
    return std::find_if(positions.begin(), positions.end(), [&](auto& p) { return p.first == o; })
        ->second;
  };
  for (int r = first; r <= last; ++r) {
    int64_t base = 0;  // the segment's first record's position in the rank
    std::vector<CellSample> rank;
    for (const Segment& s : plan.evaluated[size_t(r)].sequence.segments) {
      const Order& o = *s.order;
      const int64_t end = s.start + (s.count - 1) * s.stride;  // the last position walked
      for (const int64_t q : positionsOf(&o)) {
        // Every walked position congruent to q modulo n: q, and q + n, q + 2n, ... where
        // the segment wraps round as padding.
        for (int64_t pos = q + (s.start > q ? (s.start - q + o.n - 1) / o.n * o.n : 0);
             s.count > 0 && pos <= end; pos += o.n) {
          if ((pos - s.start) % s.stride != 0) continue;
          rank.push_back({o.at(q), base + (pos - s.start) / s.stride, r, row, col,
                          uint8_t(s.flags | (pos >= o.n ? kPadding : 0))});
        }
      }
      base += s.count;
    }
    std::sort(rank.begin(), rank.end(),
              [](const CellSample& a, const CellSample& b) { return a.position < b.position; });
    out.insert(out.end(), rank.begin(), rank.end());
  }
}

// A simulation's records of a cell, with the count known in advance from the per-rank
// matrices: a common cell is walked straight over the plan and the walk stops as soon as the
// list is full (a few thousand samples in); a rare one, which a walk would follow to the
// end, is found from the dataset side (rareCellSamples). Returns false when the count is
// not known exactly, or the plan has a layout this does not cover.
bool simulatedCellSamples(const Evaluation& e, int first, int last, int row, int col, size_t limit,
                          std::vector<CellSample>& out, int64_t& n) {
  const std::optional<int64_t> count = exactCellCount(e, first, last, row, col);
  if (!count) return false;
  const DatasetInputs& in = *e.inputs;
  const ShardPlan& plan = *e.plan;
  for (int r = first; r <= last; ++r)
    for (const Segment& s : plan.evaluated[size_t(r)].sequence.segments)
      if (s.stride <= 0 || s.order->n != in.size()) return false;
  const int32_t key = row * in.classes() + col;
  n = *count;
  out.clear();
  if (n == 0 || limit == 0) return true;
  constexpr int64_t kRare = 4096;
  if (n <= kRare) {
    rareCellSamples(e, first, last, key, row, col, out);
    if (out.size() > limit) out.resize(limit);
    return true;
  }
  for (int r = first; r <= last && out.size() < limit; ++r) {
    int64_t base = 0;  // the segment's first record's position in the rank
    for (const Segment& s : plan.evaluated[size_t(r)].sequence.segments) {
      const Order& o = *s.order;
      for (int64_t k = 0; k < s.count && out.size() < limit; ++k) {
        const int64_t pos = s.start + k * s.stride;
        const int64_t index = o.at(pos % o.n);
        if (in.keys[size_t(index)] != key) continue;
        out.push_back(
            {index, base + k, r, row, col, uint8_t(s.flags | (pos >= o.n ? kPadding : 0))});
      }
      base += s.count;
    }
  }
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
  // The fast paths read the packed keys, one cell per sample: a sample of many counts is
  // walked through its row of cells instead.
  const CellTable* cells = records.cell_table();
  if (!distinct && !cells && e.plan && e.inputs &&
      simulatedCellSamples(e, first, last, row, col, limit, out, n)) {
    if (total) *total = n;
    return out;
  }
  std::unordered_set<int64_t> seen;  // distinct indices only
  for (int k = first; k <= last; ++k) {
    const bool more = walk_records(records, k, [&](const Record& r, int64_t position) {
      const int64_t count = recordCount(r, cells, row, col);
      if (count == 0) return true;
      if (distinct && !seen.insert(r.index).second) return true;
      if (out.size() < limit)
        out.push_back({r.index, distinct ? r.index : position, distinct ? -1 : k, row, col,
                       distinct ? uint8_t(0) : r.flags, count});
      ++n;
      return total || out.size() < limit;
    });
    if (!more) break;
  }
  if (total) *total = n;
  return out;
}

}  // namespace shardlens

// Record statistics of a simulation read off its shard plan. Every rank walks one shared
// order (a permutation or the identity) by a stride, so coverage can be counted per
// position of that order, in sequential memory, and mapped to dataset indices once; only
// padding, sanity and duplicate records (few) are looked at one by one.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "core/diagnosis/stats.h"
#include "core/torchsem/loader.h"

namespace shardlens {
namespace {

bool same_order(const Order& a, const Order& b) {
  return &a == &b || (a.perm.empty() && b.perm.empty() && a.n == b.n);
}

// Calls f(k, position, index, flags) for elements [from, to) of a segment.
template <class F>
void for_each_in_segment(const Segment& s, int64_t from, int64_t to, F&& f) {
  const Order& o = *s.order;
  for (int64_t k = from; k < to; ++k) {
    const int64_t pos = s.start + k * s.stride;
    const int64_t wrapped = pos % o.n;
    f(k, wrapped, o.at(wrapped), static_cast<uint8_t>(s.flags | (pos >= o.n ? kPadding : 0)));
  }
}

// Descents of a rank's index sequence outside the sanity check, stopping once there are
// more than `enough`.
int64_t descents(const RankSequence& seq, int64_t enough) {
  int64_t found = 0;
  int64_t previous = -1;
  for (const Segment& s : seq.segments) {
    if (s.flags & kSanity) continue;
    const Order& o = *s.order;
    for (int64_t k = 0; k < s.count && found <= enough; ++k) {
      const int64_t index = o.at((s.start + k * s.stride) % o.n);
      found += index < previous;
      previous = index;
    }
  }
  return found;
}

// Evaluations per position of the shared order (saturating), outside the sanity check.
std::vector<uint8_t> position_counts(const ShardPlan& plan, int64_t n) {
  std::vector<uint8_t> counts;
  assign_huge(counts, static_cast<size_t>(n), uint8_t{0});
  uint8_t* c = counts.data();
  for (const EvaluatedRank& rank : plan.evaluated) {
    for (const Segment& s : rank.sequence.segments) {
      if (s.flags & kSanity) continue;
      const int64_t direct = unwrapped_count(s);
      int64_t pos = s.start;
      int64_t k = 0;
      for (; k < direct; ++k, pos += s.stride) c[pos] = uint8_t(c[pos] + (c[pos] < 255));
      for (; k < s.count; ++k, pos += s.stride) {
        uint8_t& t = c[pos % n];
        t = uint8_t(t + (t < 255));
      }
    }
  }
  return counts;
}

// The count of every position when all are counted alike, else nullopt. Counted a block of
// positions at a time (each block in cache), so the uniform case, a DistributedSampler's
// usual one, makes no array of n counts: 1 GB at 10^9 samples. Positions that wrap past n
// are padding, a few per rank; past kMaxWrapped of them the caller's full count decides.
std::optional<uint8_t> uniform_position_count(const ShardPlan& plan, int64_t n) {
  constexpr size_t kMaxWrapped = size_t(1) << 20;
  struct Run {
    int64_t start, stride, direct;
  };
  std::vector<Run> runs;
  std::vector<int64_t> wrapped;
  for (const EvaluatedRank& rank : plan.evaluated) {
    for (const Segment& s : rank.sequence.segments) {
      if (s.flags & kSanity) continue;
      if (s.stride <= 0) return std::nullopt;
      const int64_t direct = unwrapped_count(s);
      runs.push_back({s.start, s.stride, direct});
      for (int64_t k = direct; k < s.count; ++k) {
        if (wrapped.size() == kMaxWrapped) return std::nullopt;
        wrapped.push_back((s.start + k * s.stride) % n);
      }
    }
  }
  std::sort(wrapped.begin(), wrapped.end());
  constexpr int64_t kBlock = int64_t(1) << 16;
  std::vector<uint8_t> block(static_cast<size_t>(kBlock));
  std::optional<uint8_t> value;
  size_t next_wrapped = 0;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    uint8_t* c = block.data() - begin;  // c[pos] for pos in [begin, end)
    std::fill(block.begin(), block.end(), uint8_t{0});
    for (const Run& r : runs) {
      int64_t k = begin <= r.start ? 0 : (begin - r.start + r.stride - 1) / r.stride;
      for (int64_t pos = r.start + k * r.stride; k < r.direct && pos < end; ++k, pos += r.stride)
        c[pos] = uint8_t(c[pos] + (c[pos] < 255));
    }
    for (; next_wrapped < wrapped.size() && wrapped[next_wrapped] < end; ++next_wrapped) {
      uint8_t& t = c[wrapped[next_wrapped]];
      t = uint8_t(t + (t < 255));
    }
    const auto [least, most] = std::minmax_element(block.begin(), block.begin() + (end - begin));
    if (*least != *most || (value && *value != *least)) return std::nullopt;
    value = *least;
  }
  return value;
}

// Duplicates in walk order (rank by rank): the second and later evaluations of a position,
// within the same rank or across ranks. Only positions counted twice or more are tracked.
void classify_duplicates(const ShardPlan& plan, const std::vector<uint8_t>& counts,
                         const DatasetInputs& in, RecordStats& st) {
  std::unordered_map<int64_t, uint16_t> last_rank;  // position -> rank + 1 that saw it last
  for (size_t p = 0; p < counts.size(); ++p)
    if (counts[p] > 1) last_rank.emplace(int64_t(p), 0);
  if (last_rank.empty()) return;
  for (int r = 0; r < plan.world_size; ++r) {
    const RankSequence& seq = plan.evaluated[size_t(r)].sequence;
    const int64_t size = seq.size();
    int64_t offset = 0;  // the segment's first record's position in the rank
    for (const Segment& s : seq.segments) {
      if (!(s.flags & kSanity)) {
        for_each_in_segment(s, 0, s.count, [&](int64_t k, int64_t pos, int64_t index, uint8_t) {
          if (counts[size_t(pos)] < 2) return;
          uint16_t& last = last_rank[pos];
          const int32_t target = in.target(index);
          if (last == r + 1) {
            st.within_rank_duplicates.add(index, target);
          } else if (last != 0) {
            st.cross_rank_duplicates.add(index, target);
            if (offset + k == size - 1) ++st.cross_rank_at_rank_end;
          }
          last = static_cast<uint16_t>(r + 1);
        });
      }
      offset += s.count;
    }
  }
}

}  // namespace

std::optional<RecordStats> stats_from_plan(const ShardPlan& plan, const DatasetInputs& in,
                                           Progress* progress) {
  const int64_t n = plan.n;
  const Order* order = nullptr;
  for (const EvaluatedRank& rank : plan.evaluated)
    for (const Segment& s : rank.sequence.segments) {
      if (s.flags & kSanity) continue;
      if (!order) order = s.order.get();
      if (!same_order(*order, *s.order)) return std::nullopt;
      // Counting per position stands for counting per index only when positions and
      // indices correspond one to one, over the dataset itself.
      if (!s.order->permutation || s.order->n != n) return std::nullopt;
    }
  step(progress, "diagnosing", 0.0);
  RecordStats st;
  auto target = [&](int64_t index) { return in.target(index); };
  for (const EvaluatedRank& rank : plan.evaluated) {
    const RankSequence& seq = rank.sequence;
    int64_t outside_sanity = 0;
    for (const Segment& s : seq.segments) {
      st.records += s.count;
      if (s.flags & kSanity) {
        for_each_in_segment(s, 0, s.count, [&](int64_t, int64_t, int64_t index, uint8_t flags) {
          if (flags & kPadding) st.flagged_padding.add(index, target(index));
          st.flagged_sanity.add(index, target(index));
        });
        continue;
      }
      outside_sanity += s.count;
      // Padding: the whole segment when flagged, else the positions that wrap past n.
      const int64_t first_padding = (s.flags & kPadding) ? 0 : unwrapped_count(s);
      for_each_in_segment(s, first_padding, s.count, [&](int64_t, int64_t, int64_t index, uint8_t) {
        st.flagged_padding.add(index, target(index));
      });
    }
    st.rank_sizes.push_back(outside_sanity);
    // A padded wrap-around or a sanity prefix adds a descent or two; more means shuffled.
    if (seq.size() >= 8 && descents(seq, 2) > 2) st.shuffled_order = true;
  }
  if (n <= 0 || !order) {
    st.times = Coverage::uniform(size_t(std::max<int64_t>(n, 0)), 0);
    return st;
  }
  step(progress, "diagnosing", 0.3);
  if (const std::optional<uint8_t> same = uniform_position_count(plan, n); same && *same <= 1) {
    // Every index evaluated once (or never): no duplicates to classify, one count for all.
    st.times = Coverage::uniform(size_t(n), *same);
    return st;
  }
  std::vector<uint8_t> counts = position_counts(plan, n);
  step(progress, "diagnosing", 0.6);
  uint8_t least = 255, most = 0;  // one pass: are they all equal, is any counted twice?
  for (const uint8_t t : counts) least = std::min(least, t), most = std::max(most, t);
  if (most > 1) classify_duplicates(plan, counts, in, st);
  step(progress, "diagnosing", 0.8);
  const bool uniform = least == most;
  if (order->perm.empty() || uniform) {
    st.times = std::move(counts);  // positions are indices, or every index counts the same
  } else {
    std::vector<uint8_t> times;
    assign_huge(times, size_t(n), uint8_t{0});
    const uint32_t* perm = order->perm.data();
    for (int64_t p = 0; p < n; ++p) times[perm[p]] = counts[size_t(p)];
    st.times = Coverage(std::move(times));
  }
  return st;
}

}  // namespace shardlens

// Per-rank accumulation: the hot loop of the engine.
#include <algorithm>
#include <atomic>
#include <thread>

#include "core/sim/engine.h"

namespace shardlens {

namespace {

// Calls count(key) for every element of a rank. Like for_each_element, but it prefetches
// the key a few elements ahead: through a permutation, keys[perm[pos]] is a random read
// of an n-sized array and the cache misses, not the counting, set the pace.
template <class Count>
void for_each_key(const RankSequence& seq, const uint32_t* keys, Count&& count) {
  constexpr int64_t kAhead = 16;
  for (const Segment& s : seq.segments) {
    const Order& o = *s.order;
    const int64_t direct = unwrapped_count(s);
    int64_t pos = s.start;
    int64_t k = 0;
    if (o.perm.empty()) {
      for (; k < direct; ++k, pos += s.stride) count(keys[pos]);
    } else {
      const uint32_t* perm = o.perm.data();
      const int64_t ahead = kAhead * s.stride;
      for (; k + kAhead < direct; ++k, pos += s.stride) {
        __builtin_prefetch(keys + perm[pos + ahead]);
        count(keys[perm[pos]]);
      }
      for (; k < direct; ++k, pos += s.stride) count(keys[perm[pos]]);
    }
    for (; k < s.count; ++k, pos += s.stride) count(keys[o.at(pos % o.n)]);  // padding
  }
}

// int64 counters: exact counts in 32-bit cells (a rank sees < 2^32 samples), widened once.
// `counts` is the worker's scratch, reused from rank to rank: a fresh C x C buffer per rank
// costs page faults comparable to the counting itself at C = 1000.
Matrix count_exact(const RankSequence& seq, const DatasetInputs& in, int ignore_index,
                   std::vector<uint32_t>& counts) {
  const int32_t c = in.classes();
  counts.assign(static_cast<size_t>(c) * c, 0);
  const uint32_t* keys = in.keys.data();
  if (ignore_index < 0) {
    for_each_key(seq, keys, [&](uint32_t key) { ++counts[key]; });
  } else {
    const auto lo = static_cast<uint32_t>(ignore_index) * static_cast<uint32_t>(c);
    const uint32_t hi = lo + static_cast<uint32_t>(c);
    for_each_key(seq, keys, [&](uint32_t key) {
      if (key < lo || key >= hi) ++counts[key];
    });
  }
  Matrix m(c);
  std::copy(counts.begin(), counts.end(), m.cells.begin());
  return m;
}

// Float counters: each batch's bincount is added to the state and rounded, as
// `state += torch.bincount(...)` on a float16 / bfloat16 / float32 tensor does.
Matrix count_rounded(const RankSequence& seq, const DatasetInputs& in, int ignore_index,
                     int64_t batch_size, CounterDtype dtype) {
  const int32_t c = in.classes();
  Matrix m(c);
  std::vector<uint32_t> batch;
  batch.reserve(static_cast<size_t>(batch_size));
  auto flush = [&] {
    std::sort(batch.begin(), batch.end());
    for (size_t i = 0; i < batch.size();) {
      size_t j = i;
      while (j < batch.size() && batch[j] == batch[i]) ++j;
      double& cell = m.cells[batch[i]];
      cell = round_to_dtype(cell + static_cast<double>(j - i), dtype);
      i = j;
    }
    batch.clear();
  };
  for_each_element(seq, [&](int64_t index, uint8_t) {
    const uint32_t key = in.keys[static_cast<size_t>(index)];
    if (ignore_index < 0 || static_cast<int32_t>(key / c) != ignore_index) batch.push_back(key);
    if (static_cast<int64_t>(batch.size()) == batch_size) flush();
  });
  flush();
  return m;
}

}  // namespace

std::vector<Matrix> accumulate(const ShardPlan& plan, const DatasetInputs& inputs,
                               CounterDtype dtype, int ignore_index, Progress* progress) {
  const int w = plan.world_size;
  std::vector<Matrix> out(static_cast<size_t>(w));
  std::atomic<int> next{0};
  auto worker = [&] {
    std::vector<uint32_t> scratch;
    for (int r = next++; r < w; r = next++) {
      const RankSequence& seq = plan.evaluated[static_cast<size_t>(r)].sequence;
      out[static_cast<size_t>(r)] =
          dtype == CounterDtype::Int64
              ? count_exact(seq, inputs, ignore_index, scratch)
              : count_rounded(seq, inputs, ignore_index, plan.batch_size, dtype);
    }
  };
  // Ranks are independent: spread them over the cores (a rank per task).
  const unsigned threads = std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()),
                                              static_cast<unsigned>(w));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  step(progress, "accumulating", 1.0);
  return out;
}

}  // namespace shardlens

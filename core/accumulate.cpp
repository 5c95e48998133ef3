// Per-rank accumulation: the hot loop of the engine.
#include <algorithm>
#include <atomic>
#include <thread>

#include "core/engine.h"

namespace shardlens {

namespace {

// int64 counters: exact counts in 32-bit cells (a rank sees < 2^32 samples), widened once.
Matrix count_exact(const RankSequence& seq, const DatasetInputs& in, int ignore_index) {
  const int32_t c = in.classes();
  std::vector<uint32_t> counts(static_cast<size_t>(c) * c, 0);
  const uint32_t* keys = in.keys.data();
  if (ignore_index < 0) {
    for_each_element(seq, [&](int64_t index, uint8_t) { ++counts[keys[index]]; });
  } else {
    const auto lo = static_cast<uint32_t>(ignore_index) * static_cast<uint32_t>(c);
    const uint32_t hi = lo + static_cast<uint32_t>(c);
    for_each_element(seq, [&](int64_t index, uint8_t) {
      const uint32_t key = keys[index];
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
  std::atomic<int> done{0};
  auto worker = [&] {
    for (int r = next++; r < w; r = next++) {
      const RankSequence& seq = plan.evaluated[static_cast<size_t>(r)].sequence;
      out[static_cast<size_t>(r)] =
          dtype == CounterDtype::Int64
              ? count_exact(seq, inputs, ignore_index)
              : count_rounded(seq, inputs, ignore_index, plan.batch_size, dtype);
      ++done;
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

// Per-rank accumulation: the hot loop of the engine.
#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "core/sim/engine.h"

namespace shardlens {

namespace {

// Calls count(key) for every element of a segment. Like for_each_element, but it prefetches
// the key a few elements ahead: through a permutation, keys[perm[pos]] is a random read of
// an n-sized array and the cache misses, not the counting, set the pace.
template <class Count>
void for_each_key(const Segment& s, const uint32_t* keys, Count&& count) {
  constexpr int64_t kAhead = 16;
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

// A rank's elements in pieces of at most kPiece, in order: between pieces the workers look
// for a cancel and the progress bar moves. f(piece) returns false to stop.
constexpr int64_t kPiece = int64_t(1) << 16;
template <class F>
bool for_each_piece(const RankSequence& seq, F&& f) {
  for (const Segment& s : seq.segments) {
    for (int64_t k = 0; k < s.count; k += kPiece) {
      Segment piece = s;
      piece.start = s.start + k * s.stride;
      piece.count = std::min(kPiece, s.count - k);
      if (!f(piece)) return false;
    }
  }
  return true;
}

// Counts every key of a rank's sequence into `counts` (C x C cells), leaving out the keys
// of the ignored class.
template <class Cell>
void count_keys(const RankSequence& seq, const DatasetInputs& in, int ignore_index, Cell* counts,
                const std::function<bool(int64_t)>& advance) {
  const auto c = static_cast<uint32_t>(in.classes());
  const uint32_t* keys = in.unsigned_keys();
  const auto lo = static_cast<uint32_t>(std::max(ignore_index, 0)) * c;
  const uint32_t hi = ignore_index < 0 ? 0 : lo + c;
  for_each_piece(seq, [&](const Segment& piece) {
    if (ignore_index < 0) {
      for_each_key(piece, keys, [&](uint32_t key) { ++counts[key]; });
    } else {
      for_each_key(piece, keys, [&](uint32_t key) {
        if (key < lo || key >= hi) ++counts[key];
      });
    }
    return advance(piece.count);
  });
}

// Matrices up to this many cells count in a 32-bit scratch; larger ones in place.
constexpr size_t kScratchCells = size_t(1) << 16;

// int64 counters. A small matrix counts in 32-bit cells (a rank sees < 2^32 samples), the
// worker's `scratch` reused from rank to rank, widened once: runs of one key (a sorted
// dataset) chain through memory, faster in integers. A large one (C = 1000: 8 MB a rank)
// counts straight into the matrix, whose doubles hold counts exactly: clearing and copying a
// C x C scratch cost more than the counting there (64 ranks: 256 MB of memory traffic).
Matrix count_exact(const RankSequence& seq, const DatasetInputs& in, int ignore_index,
                   std::vector<uint32_t>& scratch, const std::function<bool(int64_t)>& advance) {
  const int32_t c = in.classes();
  const size_t cells = static_cast<size_t>(c) * static_cast<size_t>(c);
  Matrix m(c);
  if (cells > kScratchCells) {
    count_keys(seq, in, ignore_index, m.cells.data(), advance);
    return m;
  }
  scratch.assign(cells, 0u);
  count_keys(seq, in, ignore_index, scratch.data(), advance);
  std::copy(scratch.begin(), scratch.end(), m.cells.begin());
  return m;
}

// Float counters: each batch's bincount is added to the state and rounded, as
// `state += torch.bincount(...)` on a float16 / bfloat16 / float32 tensor does.
Matrix count_rounded(const RankSequence& seq, const DatasetInputs& in, int ignore_index,
                     int64_t batch_size, CounterDtype dtype,
                     const std::function<bool(int64_t)>& advance) {
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
  // Batches run across pieces: the buffer outlives each one.
  for_each_piece(seq, [&](const Segment& piece) {
    for_each_key(piece, in.unsigned_keys(), [&](uint32_t key) {
      if (ignore_index < 0 || static_cast<int32_t>(key / uint32_t(c)) != ignore_index)
        batch.push_back(key);
      if (static_cast<int64_t>(batch.size()) == batch_size) flush();
    });
    return advance(piece.count);
  });
  flush();
  return m;
}

// A task whose samples count many cells (sample_cells.h): the samples are few (images,
// sequences) and their cells many, so a rank counts how often it evaluated each sample, then
// adds each sample's row of cells that often.
Matrix count_cells_exact(const RankSequence& seq, const DatasetInputs& in, int ignore_index,
                         const std::function<bool(int64_t)>& advance) {
  std::vector<uint32_t> times(static_cast<size_t>(in.size()), 0);
  for_each_piece(seq, [&](const Segment& piece) {
    RankSequence one;
    one.segments.push_back(piece);
    for_each_element(one, [&](int64_t index, uint8_t) { ++times[static_cast<size_t>(index)]; });
    return advance(piece.count);
  });
  Matrix m(in.classes());
  for (size_t i = 0; i < times.size(); ++i)
    if (times[i] > 0) count_sample_cells(m, *in.cells, int64_t(i), ignore_index, times[i]);
  return m;
}

// Float counters over samples of many cells: each batch's cells are summed (the batch's
// bincount over its pixels), then added to the state and rounded once per cell.
Matrix count_cells_rounded(const RankSequence& seq, const DatasetInputs& in, int ignore_index,
                           int64_t batch_size, CounterDtype dtype,
                           const std::function<bool(int64_t)>& advance) {
  Matrix m(in.classes());
  Matrix batch(in.classes());
  std::vector<uint32_t> touched;
  int64_t in_batch = 0;
  auto flush = [&] {
    for (uint32_t key : touched) {
      if (batch.cells[key] == 0) continue;
      m.cells[key] = round_to_dtype(m.cells[key] + batch.cells[key], dtype);
      batch.cells[key] = 0;
    }
    touched.clear();
    in_batch = 0;
  };
  for_each_piece(seq, [&](const Segment& piece) {
    RankSequence one;
    one.segments.push_back(piece);
    for_each_element(one, [&](int64_t index, uint8_t) {
      count_sample_cells(batch, *in.cells, index, ignore_index);
      for (uint32_t key : in.cells->keys_of(index)) touched.push_back(key);
      if (++in_batch == batch_size) flush();
    });
    return advance(piece.count);
  });
  flush();
  return m;
}

}  // namespace

std::vector<Matrix> accumulate(const ShardPlan& plan, const DatasetInputs& inputs,
                               CounterDtype dtype, int ignore_index, Progress* progress) {
  const int w = plan.world_size;
  std::vector<Matrix> out(static_cast<size_t>(w));
  int64_t total = 0;
  for (const EvaluatedRank& r : plan.evaluated) total += r.sequence.size();
  std::atomic<int> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto main_thread = std::this_thread::get_id();
  // Between pieces: count the work, and on the caller's thread move the bar and take a
  // cancel (step throws Cancelled); any thread's exception stops every worker.
  const std::function<bool(int64_t)> advance = [&](int64_t elements) {
    const int64_t so_far = done += elements;
    if (std::this_thread::get_id() == main_thread)
      step(progress, "accumulating", total > 0 ? double(so_far) / double(total) : 1.0);
    return !stop.load(std::memory_order_relaxed);
  };
  auto worker = [&] {
    try {
      std::vector<uint32_t> scratch;
      for (int r = next++; r < w && !stop; r = next++) {
        const RankSequence& seq = plan.evaluated[static_cast<size_t>(r)].sequence;
        if (inputs.cells) {
          out[static_cast<size_t>(r)] =
              dtype == CounterDtype::Int64
                  ? count_cells_exact(seq, inputs, ignore_index, advance)
                  : count_cells_rounded(seq, inputs, ignore_index, plan.batch_size, dtype, advance);
          continue;
        }
        out[static_cast<size_t>(r)] =
            dtype == CounterDtype::Int64
                ? count_exact(seq, inputs, ignore_index, scratch, advance)
                : count_rounded(seq, inputs, ignore_index, plan.batch_size, dtype, advance);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  // Ranks are independent: spread them over the cores (a rank per task).
  const unsigned threads = std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()),
                                              static_cast<unsigned>(w));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  step(progress, "accumulating", 1.0);
  return out;
}

}  // namespace shardlens

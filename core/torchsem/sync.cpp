#include "core/torchsem/sync.h"

#include <algorithm>
#include <future>

#include "core/torchsem/rank_sum.h"

#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

// Sum over ranks; a float counter rounds after each addition as a float all-reduce would.
Matrix all_reduce(const std::vector<Matrix>& per_rank, CounterDtype dtype) {
  Matrix sum(per_rank.front().classes);
  if (dtype == CounterDtype::Int64) {
    // Exact, in the ranks' order, a block of cells at a time: the block of the sum stays in
    // the cache while every rank's block is added, instead of W passes over all C x C cells
    // of the sum (at 64 ranks and 1000 classes, 512 MB more to read and write).
    constexpr size_t kBlock = 2048;
    double* out = sum.cells.data();
    const size_t n = sum.cells.size();
    const auto add = [&](size_t first, size_t last) {
      for (size_t begin = first; begin < last; begin += kBlock) {
        const size_t end = std::min(last, begin + kBlock);
        for (const Matrix& m : per_rank) {
          const double* in = m.cells.data();
          for (size_t i = begin; i < end; ++i) out[i] += in[i];
        }
      }
    };
    // At 1000 classes the cells' second half on a second core (each cell's additions stay in
    // the ranks' order, so the sum is the same).
    constexpr double kHalvedCells = double(1 << 22);
    if (double(n) * double(per_rank.size()) < kHalvedCells) {
      add(0, n);
      return sum;
    }
    const size_t half = n / 2 / kBlock * kBlock;
    auto second = std::async(std::launch::async, add, half, n);
    add(0, half);
    second.get();
    return sum;
  }
  for (const Matrix& m : per_rank) {
    for (size_t i = 0; i < sum.cells.size(); ++i) {
      sum.cells[i] = round_to_dtype(sum.cells[i] + m.cells[i], dtype);
    }
  }
  return sum;
}

Matrix bincount_records(const std::vector<Record>& records, int32_t classes, int ignore_index,
                        const CellTable* cells) {
  Matrix m(classes);
  count_records(m, records, ignore_index, cells);
  return m;
}

// Gathered tensors are counted once, on the gathering side, in exact integers.
Matrix bincount_all(const RecordSource& records, int32_t classes, int ignore_index) {
  Matrix m(classes);
  for (int r = 0; r < records.world_size(); ++r) count_records(m, records, r, ignore_index);
  return m;
}

// Every rank pads its (target, pred) tensors with zeros to the longest rank before an
// all_gather, and nobody trims: each padded slot becomes a (0, 0) pair.
Matrix gather_zero_pad(const SyncInputs& in, int32_t classes) {
  Matrix m = bincount_all(*in.records, classes, in.ignore_index);
  int64_t longest = 0;
  for (int r = 0; r < in.records->world_size(); ++r) {
    longest = std::max(longest, in.records->rank_size(r));
  }
  if (in.ignore_index == 0) return m;
  for (int r = 0; r < in.records->world_size(); ++r) {
    m.at(0, 0) += static_cast<double>(longest - in.records->rank_size(r));
  }
  return m;
}

}  // namespace

std::vector<Record> gather_for_metrics_records(const RecordSource& records, int64_t dataset_size,
                                               int64_t batch_size, bool loader_exhausted,
                                               bool pad) {
  const int w = records.world_size();
  int64_t batches = 0;
  for (int r = 0; r < w; ++r) {
    batches = std::max(batches, (records.rank_size(r) + batch_size - 1) / batch_size);
  }
  std::vector<Record> kept;
  std::vector<Record> gathered;
  for (int64_t b = 0; b < batches; ++b) {
    gathered.clear();
    const int64_t begin = b * batch_size;
    int64_t longest = 0;  // the step's longest batch, which pad_across_processes pads to
    for (int r = 0; r < w; ++r)
      longest = std::max(longest, std::min(records.rank_size(r), begin + batch_size) - begin);
    for (int r = 0; r < w; ++r) {  // rank-major, as all_gather concatenates
      const int64_t end = std::min(records.rank_size(r), begin + batch_size);
      const int64_t own = std::max<int64_t>(end - begin, 0);
      const size_t at = gathered.size();
      gathered.resize(at + static_cast<size_t>(own));
      if (own > 0)
        records.read(r, begin, std::span<Record>(gathered.data() + at, gathered.size() - at));
      if (pad) gathered.resize(gathered.size() + static_cast<size_t>(longest - own), Record{});
    }
    const int64_t remainder = dataset_size % (batch_size * w);
    if (b == batches - 1 && loader_exhausted && remainder > 0 &&
        static_cast<int64_t>(gathered.size()) > remainder) {
      gathered.resize(static_cast<size_t>(remainder));
    }
    kept.insert(kept.end(), gathered.begin(), gathered.end());
  }
  return kept;
}

std::vector<Record> collect_results_records(const RecordSource& records, int64_t size,
                                            int64_t per_result) {
  const int w = records.world_size();
  per_result = std::max<int64_t>(per_result, 1);
  std::vector<std::vector<Record>> ranks(static_cast<size_t>(w));
  int64_t results = 0;  // the most results a rank holds: zip_longest's length
  for (int r = 0; r < w; ++r) {
    auto& own = ranks[static_cast<size_t>(r)];
    own.resize(static_cast<size_t>(records.rank_size(r)));
    records.read(r, 0, own);
    results = std::max(results, (records.rank_size(r) + per_result - 1) / per_result);
  }
  std::vector<Record> kept;
  int64_t taken = 0;  // results kept so far: collect_results cuts the list to `size`
  for (int64_t k = 0; k < results && taken < size; ++k) {
    for (int r = 0; r < w && taken < size; ++r) {
      const auto& own = ranks[static_cast<size_t>(r)];
      const int64_t begin = k * per_result;
      const int64_t end = std::min<int64_t>(begin + per_result, std::ssize(own));
      if (begin >= end) continue;  // zip_longest's None for a rank that ran out: dropped
      kept.insert(kept.end(), own.begin() + begin, own.begin() + end);
      ++taken;
    }
  }
  return kept;
}

Matrix synchronize(SyncStrategy strategy, const SyncInputs& in) {
  const std::vector<Matrix>& per_rank = *in.per_rank;
  const int32_t classes = per_rank.front().classes;
  switch (strategy) {
    case SyncStrategy::AllReduce:
      return all_reduce(per_rank, in.dtype);
    case SyncStrategy::Local:
      return per_rank.front();
    case SyncStrategy::Double: {
      // The second all-reduce sums the already-synced matrix held by every rank: W times it,
      // exactly, for an int64 counter (not W copies of its C x C cells summed); a float
      // counter rounds at each of the additions.
      const Matrix once = all_reduce(per_rank, in.dtype);
      if (auto twice = synced_from_rank_sum(strategy, in.dtype, once, int(per_rank.size())))
        return std::move(*twice);
      return all_reduce(std::vector<Matrix>(per_rank.size(), once), in.dtype);
    }
    case SyncStrategy::GatherZeroPad:
      return gather_zero_pad(in, classes);
    case SyncStrategy::Gather:
      // The padded rows are gathered and counted: the step-wise gather, never truncated.
      if (in.pad_across_processes)
        return bincount_records(
            gather_for_metrics_records(*in.records, in.dataset_size, in.batch_size, false, true),
            classes, in.ignore_index, in.records->cell_table());
      return bincount_all(*in.records, classes, in.ignore_index);
    case SyncStrategy::GatherTrim:
      return bincount_all(*in.records, classes, in.ignore_index);
    case SyncStrategy::GatherForMetrics:
      return bincount_records(
          gather_for_metrics_records(*in.records, in.dataset_size, in.batch_size,
                                     in.loader_exhausted, in.pad_across_processes),
          classes, in.ignore_index, in.records->cell_table());
    case SyncStrategy::CollectResults:
    case SyncStrategy::CollectBatchResults:
      return bincount_records(
          collect_results_records(*in.records, in.dataset_size,
                                  strategy == SyncStrategy::CollectResults ? 1 : in.batch_size),
          classes, in.ignore_index, in.records->cell_table());
    case SyncStrategy::NormalizeThenSum: {
      Matrix sum(classes);
      for (const Matrix& m : per_rank) sum += normalize(m, Normalization::True);
      return sum;
    }
  }
  return all_reduce(per_rank, in.dtype);
}

std::optional<Matrix> synced_from_rank_sum(SyncStrategy strategy, CounterDtype dtype,
                                           const Matrix& rank_sum, int world_size) {
  if (dtype != CounterDtype::Int64) return std::nullopt;
  if (strategy == SyncStrategy::AllReduce) return rank_sum;
  if (strategy == SyncStrategy::Double) return rank_sum.scaled(double(world_size));
  return std::nullopt;
}

std::optional<Matrix> rank_sum_from_synced(SyncStrategy strategy, CounterDtype dtype,
                                           const Matrix& synced, int world_size) {
  if (dtype != CounterDtype::Int64 || world_size < 1) return std::nullopt;
  if (strategy == SyncStrategy::AllReduce) return synced;
  if (strategy != SyncStrategy::Double) return std::nullopt;
  // A division, not a product with 1 / W (inexact for W = 3): each cell is W times a whole
  // number, so the quotient is that number exactly.
  Matrix sum = synced;
  const double w = double(world_size);
  for (double& v : sum.cells) v /= w;
  return sum;
}

std::string to_string(SyncStrategy s) {
  switch (s) {
    case SyncStrategy::AllReduce:
      return "all-reduce";
    case SyncStrategy::Local:
      return "local";
    case SyncStrategy::Double:
      return "double";
    case SyncStrategy::GatherZeroPad:
      return "gather-zero-pad";
    case SyncStrategy::GatherTrim:
      return "gather-trim";
    case SyncStrategy::GatherForMetrics:
      return "gather-for-metrics";
    case SyncStrategy::NormalizeThenSum:
      return "normalize-then-sum";
    case SyncStrategy::Gather:
      return "gather";
    case SyncStrategy::CollectResults:
      return "collect-results";
    case SyncStrategy::CollectBatchResults:
      return "collect-batch-results";
  }
  return "all-reduce";
}

SyncStrategy parse_sync_strategy(const std::string& text) {
  for (SyncStrategy s : kSyncStrategies) {
    if (to_string(s) == text) return s;
  }
  throw InputError("--sync: '" + text + "' is not one of " + sync_strategy_choices(", "));
}

std::string sync_strategy_choices(const std::string& separator) {
  std::string out;
  for (SyncStrategy s : kSyncStrategies) out += (out.empty() ? "" : separator) + to_string(s);
  return out;
}

std::string to_string(LoggedAccuracy l) {
  switch (l) {
    case LoggedAccuracy::None:
      return "none";
    case LoggedAccuracy::RankMean:
      return "rank-mean";
    case LoggedAccuracy::PerBatch:
      return "per-batch";
    case LoggedAccuracy::Both:
      return "both";
  }
  return "none";
}

LoggedAccuracy parse_logged_accuracy(const std::string& text) {
  for (LoggedAccuracy l : kLoggedAccuracies)
    if (to_string(l) == text) return l;
  throw InputError("--logged-accuracy: '" + text +
                   "' is not one of none, rank-mean, per-batch, both");
}

bool per_step_collective(SyncStrategy s) {
  return s == SyncStrategy::Gather || s == SyncStrategy::GatherForMetrics;
}

}  // namespace shardlens

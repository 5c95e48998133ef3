#include "core/realrun/rank_sync.h"

#include <algorithm>
#include <optional>

#include "core/torchsem/sync.h"

namespace shardlens {

namespace {

Matrix matrix_of(const std::vector<double>& cells, size_t from, int32_t classes) {
  Matrix m(classes);
  std::copy(cells.begin() + std::ptrdiff_t(from),
            cells.begin() + std::ptrdiff_t(from + m.cells.size()), m.cells.begin());
  return m;
}

// torchmetrics' dist_reduce_fx="sum" on a float state: the all_reduce itself sums in the
// counter dtype (twice for double-sync). Empty when the backend cannot sum that dtype.
std::optional<Matrix> float_all_reduce(RankCollectives& coll, const Matrix& local,
                                       const Scenario& s) {
  std::vector<double> sum = local.cells;
  if (!coll.all_reduce_sum(sum, s.dtype, "all_reduce")) return std::nullopt;
  if (s.sync == SyncStrategy::Double && !coll.all_reduce_sum(sum, s.dtype, "second all_reduce"))
    return std::nullopt;
  Matrix m(local.classes);
  m.cells = std::move(sum);
  return m;
}

}  // namespace

RealSync synchronize_for_real(RankCollectives& coll, const Scenario& s, const RankOutput& out,
                              int world, int64_t dataset_size) {
  const int32_t classes = out.local.classes;
  const size_t cells = out.local.cells.size();
  // Every strategy needs the per-rank matrices somewhere; gather them for real.
  const std::vector<double> gathered =
      coll.all_gather(out.local.cells, "all_gather of the per-rank matrices");
  if (gathered.size() != size_t(world) * cells)
    throw RunFailure("all_gather of the per-rank matrices returned the wrong size");
  std::vector<Matrix> per_rank;
  for (int r = 0; r < world; ++r)
    per_rank.push_back(matrix_of(gathered, size_t(r) * cells, classes));

  const bool integral = s.dtype == CounterDtype::Int64;
  if ((s.sync == SyncStrategy::AllReduce || s.sync == SyncStrategy::Double) && integral) {
    // torchmetrics' dist_reduce_fx="sum": an int64 all_reduce (twice for double-sync).
    std::vector<int64_t> sum(cells);
    for (size_t k = 0; k < cells; ++k) sum[k] = static_cast<int64_t>(out.local.cells[k]);
    coll.all_reduce_sum(sum, "all_reduce");
    if (s.sync == SyncStrategy::Double) coll.all_reduce_sum(sum, "second all_reduce");
    Matrix m(classes);
    for (size_t k = 0; k < cells; ++k) m.cells[k] = double(sum[k]);
    return {m, ""};
  }
  std::string note;
  if (s.sync == SyncStrategy::AllReduce || s.sync == SyncStrategy::Double) {
    if (std::optional<Matrix> m = float_all_reduce(coll, out.local, s)) return {*m, ""};
    note = "this LibTorch's Gloo cannot all_reduce " + to_string(s.dtype) +
           " tensors (torch.distributed fails the same way); the per-rank matrices were "
           "gathered and summed in rank order with " +
           to_string(s.dtype) + " rounding instead";
  }
  if (s.sync == SyncStrategy::NormalizeThenSum) {
    Matrix m = normalize(out.local, Normalization::True);
    coll.all_reduce_sum(m.cells, "all_reduce of normalized matrices");
    return {m, ""};
  }
  StoredRecords all;
  if (s.sync == SyncStrategy::GatherZeroPad || s.sync == SyncStrategy::GatherTrim ||
      s.sync == SyncStrategy::GatherForMetrics || s.sync == SyncStrategy::Gather ||
      s.sync == SyncStrategy::CollectResults || s.sync == SyncStrategy::CollectBatchResults) {
    // Uneven all_gather as users write it: sizes first, then [4, longest] tensors padded to
    // the largest (index, target, prediction and flags rows).
    const std::vector<int64_t> sizes =
        coll.all_gather(std::vector<int64_t>{int64_t(out.records.size())}, "all_gather of sizes");
    if (sizes.size() != size_t(world) ||
        std::any_of(sizes.begin(), sizes.end(), [](int64_t n) { return n < 0; }))
      throw RunFailure("all_gather of sizes returned " + std::to_string(sizes.size()) +
                       " sizes for " + std::to_string(world) + " ranks, or a negative one");
    const size_t longest = size_t(*std::max_element(sizes.begin(), sizes.end()));
    std::vector<int64_t> mine(4 * longest, 0);
    for (size_t i = 0; i < out.records.size(); ++i) {
      mine[i] = out.records[i].index;
      mine[longest + i] = out.records[i].target;
      mine[2 * longest + i] = out.records[i].prediction;
      mine[3 * longest + i] = out.records[i].flags;
    }
    const std::vector<int64_t> recs = coll.all_gather(mine, "all_gather of records");
    if (recs.size() != size_t(world) * 4 * longest)
      throw RunFailure("all_gather of records returned the wrong size");
    for (int r = 0; r < world; ++r) {
      const int64_t* a = recs.data() + size_t(r) * 4 * longest;
      std::vector<Record> rank_records;
      for (size_t i = 0; i < size_t(sizes[size_t(r)]); ++i) {
        rank_records.push_back(Record{a[i], int32_t(a[longest + i]), int32_t(a[2 * longest + i]),
                                      uint8_t(a[3 * longest + i])});
      }
      all.ranks.push_back(std::move(rank_records));
    }
  }
  // The remaining arithmetic (zero padding, Accelerate's trimming) is the engine's, applied to
  // data that crossed the wire, so real and simulated runs agree.
  SyncInputs in;
  in.per_rank = &per_rank;
  in.records = all.ranks.empty() ? nullptr : &all;
  in.dataset_size = dataset_size;
  in.batch_size = out.rank_batch_size > 0 ? out.rank_batch_size : s.loader.batch_size;
  in.loader_exhausted = out.loader_exhausted;
  in.pad_across_processes = s.pad_across_processes;
  in.ignore_index = s.ignore_index;
  in.dtype = s.dtype;
  return {synchronize(s.sync, in), note};
}

}  // namespace shardlens

#pragma once
// Sync strategies: how per-rank matrices become the reported one.
#include <optional>
#include <string>
#include <vector>

#include "core/vocabulary/counter.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/records.h"

namespace shardlens {

enum class SyncStrategy {
  AllReduce,         // sum over ranks, correct (torchmetrics: all_gather + local sum)
  Local,             // no sync: rank 0's own matrix
  Double,            // all-reduce applied twice
  GatherZeroPad,     // gather uneven (target, pred) tensors padded with zeros, untrimmed
  GatherTrim,        // gather with trimming (correct)
  GatherForMetrics,  // Accelerate's gather_for_metrics trimming
  NormalizeThenSum,  // per-rank row-normalized matrices summed
  Gather,            // Accelerate's plain accelerator.gather: every gathered record, untrimmed
  // mmengine's collect_results(results, len(dataset)) over a metric's results: the ranks'
  // results interleaved (zip_longest) and cut to len(dataset). CollectResults: one result per
  // sample (mmseg's IoUMetric, mmpretrain's Accuracy); CollectBatchResults: one per batch.
  CollectResults,
  CollectBatchResults,
};

// Whether the strategy is a collective run at every step (Accelerate's gather and
// gather_for_metrics), which hangs when ranks run different step counts.
bool per_step_collective(SyncStrategy s);

// Every strategy, in the order help texts and menus list them.
inline constexpr SyncStrategy kSyncStrategies[] = {
    SyncStrategy::AllReduce,          SyncStrategy::Local,      SyncStrategy::Double,
    SyncStrategy::GatherZeroPad,      SyncStrategy::GatherTrim, SyncStrategy::GatherForMetrics,
    SyncStrategy::NormalizeThenSum,   SyncStrategy::Gather,     SyncStrategy::CollectResults,
    SyncStrategy::CollectBatchResults};

std::string to_string(SyncStrategy s);
SyncStrategy parse_sync_strategy(const std::string& text);  // throws InputError
// "all-reduce | local | ... | gather": what --sync accepts, from kSyncStrategies.
std::string sync_strategy_choices(const std::string& separator = " | ");

// What the run logs of the accuracy beside the matrix, with Lightning's
// self.log(name, value, sync_dist=True): nothing; each rank's epoch accuracy, which sync_dist
// averages over the ranks with equal weights; each batch's accuracy with batch_size=len(y),
// whose weighted sums and sample counts sync_dist averages; or both.
enum class LoggedAccuracy { None, RankMean, PerBatch, Both };

inline constexpr LoggedAccuracy kLoggedAccuracies[] = {
    LoggedAccuracy::None, LoggedAccuracy::RankMean, LoggedAccuracy::PerBatch, LoggedAccuracy::Both};

std::string to_string(LoggedAccuracy l);                        // "none", "rank-mean", ...
LoggedAccuracy parse_logged_accuracy(const std::string& text);  // throws InputError
inline bool logs_rank_mean(LoggedAccuracy l) {
  return l == LoggedAccuracy::RankMean || l == LoggedAccuracy::Both;
}
inline bool logs_per_batch(LoggedAccuracy l) {
  return l == LoggedAccuracy::PerBatch || l == LoggedAccuracy::Both;
}

struct SyncInputs {
  const std::vector<Matrix>* per_rank = nullptr;  // as accumulated on each rank
  const RecordSource* records = nullptr;          // for the gather strategies
  int64_t dataset_size = 0;                       // len(dataset), for gather_for_metrics
  int64_t batch_size = 1;                         // each rank's batch size (a gather step)
  bool loader_exhausted = true;  // the last batch evaluated was the loader's last one
  // Accelerate's pad_across_processes before each per-step gather: a rank's step shorter
  // than the step's longest gathers zero rows (index, target, prediction 0) to its length.
  bool pad_across_processes = false;
  int ignore_index = -1;
  CounterDtype dtype = CounterDtype::Int64;
};

Matrix synchronize(SyncStrategy strategy, const SyncInputs& in);

// Records kept by Accelerate's gather_for_metrics: rank-major per batch, the last gathered
// batch cut to its first dataset_size % (batch_size * W) items (gradient_state.remainder).
// With `pad`, each rank's batch is first padded to the step's longest with zero records
// (pad_across_processes), which the cut drops when they are the step's last rows.
std::vector<Record> gather_for_metrics_records(const RecordSource& records, int64_t dataset_size,
                                               int64_t batch_size, bool loader_exhausted,
                                               bool pad = false);

// Records kept by mmengine's collect_results when every `per_result` consecutive records of a
// rank make one result (1: a result per sample; the batch size: a result per batch, the
// rank's last one shorter): result k of rank 0, of rank 1, ..., of rank W-1 for k = 0, 1, ...
// (zip_longest, a rank that ran out skipped), the first `size` results kept. Right for a
// round_up DefaultSampler or DistributedSampler with one result per sample: its padding is
// what the cut drops.
std::vector<Record> collect_results_records(const RecordSource& records, int64_t size,
                                            int64_t per_result = 1);

}  // namespace shardlens

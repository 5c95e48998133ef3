#pragma once
// The strategies whose reported matrix is the ranks' int64 sum, once (all-reduce) or reduced
// again (double: W times it), and the way back from that matrix to the sum. A setting change
// that keeps the per-rank counts (a sync toggled between them) takes the sum from the shown
// result instead of summing W matrices of C x C cells again (at 64 ranks and 1000 classes,
// 512 MB read per pass), and the diagnosis is given the same sum. Both directions are exact:
// the cells are whole numbers below 2^53, so any order of addition, W times a cell and its
// quotient by W give what synchronize() gives.
#include <optional>

#include "core/torchsem/sync.h"

namespace shardlens {

// What `strategy` reports from the ranks' sum on `world_size` ranks, for the strategies and
// counter it covers (all-reduce and double on an int64 counter); nullopt for any other.
std::optional<Matrix> synced_from_rank_sum(SyncStrategy strategy, CounterDtype dtype,
                                           const Matrix& rank_sum, int world_size);

// The ranks' sum behind a matrix `strategy` reported on `world_size` ranks: the inverse of
// synced_from_rank_sum (nullopt where that is).
std::optional<Matrix> rank_sum_from_synced(SyncStrategy strategy, CounterDtype dtype,
                                           const Matrix& synced, int world_size);

}  // namespace shardlens

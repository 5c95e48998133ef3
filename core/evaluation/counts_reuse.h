#pragma once
// complete_evaluation (evaluation.h) for an evaluation whose per-rank matrices are copies of
// an earlier one's (a setting change that keeps the counts: evaluate()'s `earlier`,
// core/sim/engine.h). What is read from those matrices alone, each rank's total and
// diagonal, is taken from the earlier evaluation instead of read again from W x C x C cells
// (at 64 ranks and 1000 classes, 512 MB a setting change); everything else is completed as
// complete_evaluation does.
#include <optional>

#include "core/evaluation/evaluation.h"

namespace shardlens {

void complete_evaluation_with_counts_of(Evaluation& e, const Evaluation& same_counts,
                                        Progress* progress = nullptr,
                                        std::optional<RecordStats> stats = std::nullopt);

}  // namespace shardlens

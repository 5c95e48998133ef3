#pragma once
// The samples behind a confusion-matrix cell, found on demand by walking the evaluation's
// records (no per-evaluation index: building one cost as much as the evaluation itself at
// 10^6 samples, and only the hovered or clicked cell is ever asked for). Simulations and
// run files are walked alike; only the expected cell differs, by what is known.
// A sample of many counts (an image's pixels, a sequence's tokens: sample_cells.h) belongs to
// every cell its row of cells reaches, with that cell's count; a classification sample to the
// one cell of its target and prediction, with count 1.
#include <cstdint>
#include <vector>

#include "core/evaluation/evaluation.h"

namespace shardlens {

struct CellSample {
  int64_t index = 0;     // dataset index
  int64_t position = 0;  // position in the rank's evaluated sequence
  int32_t rank = -1;     // -1 for the whole dataset (expected matrix)
  int32_t target = 0;
  int32_t prediction = 0;
  uint8_t flags = 0;  // RecordFlag bits
  int64_t count = 1;  // what the sample adds to the cell: its pixels, tokens or 1
};

enum class SampleScope {
  Rank,      // one rank's records, in evaluation order
  AllRanks,  // every rank's records, rank by rank (what the synced matrix sums)
  Expected,  // the dataset's samples when every prediction is known, else one per
             // distinct evaluated index (what the expected views count)
};

// Samples of cell (row, col) in `scope` (`rank` for SampleScope::Rank), at most `limit`;
// `total` (when given) receives how many there are in all, which needs a full walk. A
// sample's `target` and `prediction` are the cell's; its count is what it adds there.
std::vector<CellSample> samplesOf(const Evaluation& e, SampleScope scope, int rank, int row,
                                  int col, size_t limit, int64_t* total = nullptr);

}  // namespace shardlens

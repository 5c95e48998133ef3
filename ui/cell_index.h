#pragma once
// The samples behind a confusion-matrix cell, found on demand by walking the shard plan
// (no per-evaluation index: building one cost as much as the evaluation itself at 10^6
// samples, and only the hovered or clicked cell is ever asked for).
#include <cstdint>
#include <vector>

#include "core/engine.h"
#include "core/records.h"

namespace shardlens::ui {

struct CellSample {
  int64_t index = 0;     // dataset index
  int64_t position = 0;  // position in the rank's evaluated sequence
  int32_t rank = -1;     // -1 for the whole dataset (expected matrix)
  int32_t target = 0;
  int32_t prediction = 0;
  uint8_t flags = 0;  // RecordFlag bits
};

// Dataset samples with the given true and predicted class (the expected matrix's cell).
// `total` (when given) receives how many there are in all, which needs a full scan.
std::vector<CellSample> datasetSamples(const Evaluation& e, int row, int col, size_t limit,
                                       int64_t* total = nullptr);
// Samples of a cell evaluated by one rank, in evaluation order.
std::vector<CellSample> rankSamples(const Evaluation& e, int rank, int row, int col, size_t limit,
                                    int64_t* total = nullptr);

// The same from stored records (run files, which have no shard plan and no prediction for
// unrecorded samples). rank < 0: one sample per distinct dataset index over all ranks,
// which is what the expected matrix of the evaluated samples counts.
std::vector<CellSample> recordSamples(const StoredRecords& records, int rank, int row, int col,
                                      size_t limit, int64_t* total = nullptr);

}  // namespace shardlens::ui

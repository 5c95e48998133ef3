#pragma once
// Which evaluated records fall into each confusion-matrix cell, per rank: a counting sort
// by cell built once per evaluation in the worker thread, so hover and click answer
// instantly instead of scanning every record.
#include <cstdint>
#include <vector>

#include "core/engine.h"

namespace shardlens::ui {

struct CellSample {
  int64_t index = 0;     // dataset index
  int64_t position = 0;  // position in the rank's evaluated sequence
  int32_t rank = -1;     // -1 for the whole dataset (expected matrix)
  int32_t target = 0;
  int32_t prediction = 0;
  uint8_t flags = 0;     // RecordFlag bits
};

class CellIndex {
 public:
  // Records beyond this many are not indexed (memory); lists then come from a scan.
  static constexpr int64_t kMaxIndexed = 20'000'000;

  void build(const Evaluation& e, Progress* progress = nullptr);
  bool indexed() const { return m_indexed; }
  int64_t count(int rank, int row, int col) const;
  // Up to `limit` samples of a cell on a rank.
  std::vector<CellSample> samples(int rank, int row, int col, size_t limit) const;

 private:
  bool m_indexed = false;
  int32_t m_classes = 0;
  std::vector<std::vector<uint32_t>> m_offsets;  // per rank, C*C + 1
  std::vector<std::vector<CellSample>> m_sorted;  // per rank, grouped by cell
};

// Dataset samples with the given true and predicted class (the expected matrix's cell).
std::vector<CellSample> datasetSamples(const Evaluation& e, int row, int col, size_t limit,
                                       int64_t* total = nullptr);
// Samples of a cell on one rank by scanning its records (used when not indexed).
std::vector<CellSample> scanRank(const Evaluation& e, int rank, int row, int col, size_t limit,
                                 int64_t* total = nullptr);

}  // namespace shardlens::ui

#pragma once
// Heatmaps built by hand in tests: a heatmap never judges its rows (HeatmapData::rowWrong is
// the only source of its marks), so a test marks them as an evaluation's row check would.
#include "core/diagnosis/row_check.h"
#include "ui/render/heatmap_data.h"

namespace shardlens::render::test {

// Marks the rows whose observed sum misses the expected one, by the row check's rule.
inline void markWrongRows(HeatmapData& d) {
  d.rowWrong.assign(d.rowObserved.size(), false);
  for (size_t r = 0; r < d.rowObserved.size() && r < d.rowExpected.size(); ++r)
    d.rowWrong[r] = sum_differs(d.rowObserved[r], d.rowExpected[r]);
}

}  // namespace shardlens::render::test

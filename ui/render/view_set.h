#pragma once
// Every heatmap the window shows for one evaluation (synced, expected, difference, each
// rank), prepared as plain data in the background job: at 1000 classes and 64 ranks that is
// 67 million cells, which on the GUI thread froze the window for seconds per click. The
// views then only swap pointers and paint what is on screen.
#include <QFont>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ui/render/heatmap_data.h"
#include "ui/render/heatmap_source.h"

namespace shardlens::render {

// Colour ranges: each view its own, so its content shows (a batch-limited synced matrix is
// not a dark square under the expected one's range); the ranks share one, so they compare.
struct ViewRanges {
  double matrices = 0;  // the synced (reported) matrix
  double expected = 0, difference = 0, ranks = 0;
  bool operator==(const ViewRanges&) const = default;
};

// What decides the views' data: the normalization and class order, and fixed colour ranges
// (View > Fix colour range). Colours and sizes are the views' own and need no new data.
struct ViewRequest {
  MatrixOptions matrix;
  std::optional<ViewRanges> fixed;
  // Fonts the views lay their labels out in: measured with the data, off the GUI thread.
  std::vector<QFont> labelFonts;
  // The ranks whose views are on screen (MatrixPanel keeps it current). Where the ranks' maps
  // are large (deferRanks()), only these are prepared with a result, the others when their
  // views are scrolled to (prepareRanks()). Unset (figures, tests): every rank. Not the
  // data: it makes no view other.
  std::optional<std::vector<int>> shownRanks;
  bool sameData(const ViewRequest& o) const { return matrix == o.matrix && fixed == o.fixed; }
};

using HeatmapPtr = std::shared_ptr<const HeatmapData>;

struct ViewSet {
  ViewRequest request;
  HeatmapPtr synced, expected, difference;
  std::vector<HeatmapPtr> ranks;  // null: not prepared yet, its view off screen (deferRanks())
  ViewRanges ranges;              // of the data, before any fixing; ranks: of every rank
};
using ViewSetPtr = std::shared_ptr<const ViewSet>;

// `cancelled` (may be empty) is polled between views; true abandons the work (returns null).
// `sameCounts` (may be null): views prepared before for an evaluation with the same per-rank
// matrices (a sync strategy toggled); its rank heatmaps are taken over where they were made
// for the same data request and class order, instead of a pass over every rank's C x C cells.
ViewSetPtr prepareViews(const Evaluation& e, const ViewRequest& request,
                        const std::function<bool()>& cancelled = {},
                        const ViewSet* sameCounts = nullptr);

// Whether the ranks' maps of `e` wait until their views are shown: at 1000 classes and more
// than 16 ranks, where preparing every rank's map was most of a setting change's time. Their
// range is known from the start (one pass over each rank's cells), so the colours do not
// change when they are made.
bool deferRanks(const Evaluation& e);
// `views` (prepared from `e`) with the maps of `ranks` made, in its shared or fixed range;
// those made already are kept. Null when cancelled.
ViewSetPtr prepareRanks(const Evaluation& e, const ViewSet& views, const std::vector<int>& ranks,
                        const std::function<bool()>& cancelled = {});

}  // namespace shardlens::render

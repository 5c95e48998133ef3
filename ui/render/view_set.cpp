#include "ui/render/view_set.h"

#include <algorithm>
#include <atomic>
#include <future>

namespace shardlens::render {

namespace {

void fix(HeatmapData& d, double top) {
  // Zero (an all-zero matrix when fixed) keeps the data's own range.
  if (top > 0) d.valueMax = top;
}

}  // namespace

ViewSetPtr prepareViews(const Evaluation& e, const ViewRequest& request,
                        const std::function<bool()>& cancelled) {
  const auto stop = [&] { return cancelled && cancelled(); };
  const ClassAxis axis = classAxis(e, request.matrix.order);
  for (const QFont& font : request.labelFonts) axis.nameWidths->widest(font, axis.names);
  const MatrixOptions& o = request.matrix;
  HeatmapData synced = syncedHeatmap(e, o, axis);
  HeatmapData expected = expectedHeatmap(e, o, axis);
  HeatmapData difference = differenceHeatmap(e, o, axis);
  // The ranks in two halves, one on a second thread: the GUI thread is idle meanwhile,
  // waiting for this result, and the 64 passes over 1000 x 1000 cells are the job's longest.
  const int world = int(e.per_rank.size());
  std::vector<HeatmapData> ranks(static_cast<size_t>(world));
  std::atomic<bool> abandoned{false};
  const auto build = [&](int first, int last) {
    for (int r = first; r < last && !abandoned; ++r) {
      if (stop())
        abandoned = true;
      else
        ranks[size_t(r)] = rankHeatmap(e, r, o, axis);
    }
  };
  {
    auto second = std::async(std::launch::async, build, world / 2, world);
    build(0, world / 2);
    second.get();
  }
  if (abandoned) return nullptr;
  shareRange(ranks);
  auto set = std::make_shared<ViewSet>();
  set->request = request;
  set->ranges = {synced.valueMax, expected.valueMax, difference.valueMax,
                 ranks.empty() ? 0.0 : ranks[0].valueMax};
  if (request.fixed) {
    fix(synced, request.fixed->matrices);
    fix(expected, request.fixed->expected);
    fix(difference, request.fixed->difference);
    for (HeatmapData& d : ranks) fix(d, request.fixed->ranks);
  }
  set->synced = std::make_shared<const HeatmapData>(std::move(synced));
  set->expected = std::make_shared<const HeatmapData>(std::move(expected));
  set->difference = std::make_shared<const HeatmapData>(std::move(difference));
  for (HeatmapData& d : ranks)
    set->ranks.push_back(std::make_shared<const HeatmapData>(std::move(d)));
  return set;
}

}  // namespace shardlens::render

#include "ui/render/view_set.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <mutex>
#include <optional>

namespace shardlens::render {

namespace {

void fix(HeatmapData& d, double top) {
  // Zero (an all-zero matrix when fixed) keeps the data's own range.
  if (top > 0) d.valueMax = top;
}

// Whether `earlier`'s rank heatmaps show what this request would make of the same per-rank
// matrices: the same data request and, per rank made, the same class order (a map not made
// yet is made when its view is shown).
bool ranksFit(const ViewSet& earlier, const ViewRequest& request, const ClassAxis& axis,
              int world) {
  if (!earlier.request.sameData(request) || int(earlier.ranks.size()) != world) return false;
  return std::all_of(earlier.ranks.begin(), earlier.ranks.end(),
                     [&](const HeatmapPtr& d) { return !d || d->classOf == axis.order; });
}

// The largest value a rank's map would show, without making the map: what its share of the
// ranks' one colour range needs while the map itself waits until its view is on screen.
double rankRange(const Evaluation& e, int rank, Normalization n) {
  const Matrix& m = e.per_rank[size_t(rank)];
  const auto top = [](const std::vector<double>& cells) {
    double t = 0;
    for (double v : cells)
      if (std::isfinite(v)) t = std::max(t, std::abs(v));
    return t;
  };
  return n == Normalization::None ? top(m.cells) : top(normalize(m, n).cells);
}

// A rank's map in the ranks' one range: shared, or fixed when asked.
void finishRank(HeatmapData& d, double shared, const ViewRequest& request) {
  d.valueMax = shared;
  if (request.fixed) fix(d, request.fixed->ranks);
  noteColourRange(d, request.fixed ? ColourRange::Fixed : ColourRange::SharedByRanks);
}

// Runs f(k) for k in [0, count) in two halves, one on a second thread (the GUI thread is
// idle meanwhile, waiting for the result); false when `stop` said so between two.
template <class F>
bool inTwoHalves(int count, const std::function<bool()>& stop, F&& f) {
  std::atomic<bool> abandoned{false};
  const auto run = [&](int first, int last) {
    for (int k = first; k < last && !abandoned; ++k) {
      if (stop && stop())
        abandoned = true;
      else
        f(k);
    }
  };
  auto second = std::async(std::launch::async, run, count / 2, count);
  run(0, count / 2);
  second.get();
  return !abandoned;
}

// The label widths measured for the last class names, kept for every result with the same
// names (each setting change but a new dataset): at 1000 classes, measuring every name in
// each label font was about 2 ms of every job.
std::shared_ptr<const LabelWidths> widthsFor(const std::vector<QString>& names) {
  static std::mutex mutex;
  static std::vector<QString> lastNames;
  static std::shared_ptr<const LabelWidths> last;
  std::lock_guard lock(mutex);
  if (!last || lastNames != names) {
    lastNames = names;
    last = std::make_shared<LabelWidths>();
  }
  return last;
}

}  // namespace

bool deferRanks(const Evaluation& e) {
  constexpr double kDeferredRankCells = 16e6;  // 16 ranks of 1000 x 1000
  const double classes = e.classes();
  return double(e.per_rank.size()) * classes * classes > kDeferredRankCells;
}

ViewSetPtr prepareViews(const Evaluation& e, const ViewRequest& request,
                        const std::function<bool()>& cancelled, const ViewSet* sameCounts) {
  ClassAxis axis = classAxis(e, request.matrix.order);
  axis.nameWidths = widthsFor(axis.names);
  for (const QFont& font : request.labelFonts) axis.nameWidths->widest(font, axis.names);
  const MatrixOptions& o = request.matrix;
  HeatmapData synced = syncedHeatmap(e, o, axis);
  HeatmapData expected = expectedHeatmap(e, o, axis);
  HeatmapData difference = differenceHeatmap(e, o, axis);
  auto set = std::make_shared<ViewSet>();
  set->request = request;
  const int world = int(e.per_rank.size());
  // A sync toggled: the ranks' matrices are those of the views shown, and so are their maps.
  // (A rank's title reads the synced matrix only where ranks reported their own or failed.)
  const bool takeRanks = sameCounts && e.reported_per_rank.empty() && e.meta.failed_ranks.empty() &&
                         ranksFit(*sameCounts, request, axis, world);
  double ranksRange = 0;
  if (takeRanks) {
    set->ranks = sameCounts->ranks;
    ranksRange = sameCounts->ranges.ranks;
  } else {
    // Every rank's map, or at 1000 classes and many ranks those on screen only (the 64
    // passes over 1000 x 1000 cells were the job's longest); the others give their range.
    const std::vector<int>* shown =
        request.shownRanks && deferRanks(e) ? &*request.shownRanks : nullptr;
    const auto now = [&](int r) {
      return !shown || std::find(shown->begin(), shown->end(), r) != shown->end();
    };
    std::vector<std::optional<HeatmapData>> maps(static_cast<size_t>(world));
    std::vector<double> ranges(static_cast<size_t>(world), 0.0);
    const bool done = inTwoHalves(world, cancelled, [&](int r) {
      if (now(r)) {
        maps[size_t(r)] = rankHeatmap(e, r, o, axis);
        ranges[size_t(r)] = maps[size_t(r)]->valueMax;
      } else {
        ranges[size_t(r)] = rankRange(e, r, o.normalization);
      }
    });
    if (!done) return nullptr;
    for (double top : ranges) ranksRange = std::max(ranksRange, top);
    for (std::optional<HeatmapData>& d : maps) {
      if (!d) {
        set->ranks.push_back(nullptr);
        continue;
      }
      finishRank(*d, ranksRange, request);
      set->ranks.push_back(std::make_shared<const HeatmapData>(std::move(*d)));
    }
  }
  set->ranges = {synced.valueMax, expected.valueMax, difference.valueMax, ranksRange};
  if (request.fixed) {
    fix(synced, request.fixed->matrices);
    fix(expected, request.fixed->expected);
    fix(difference, request.fixed->difference);
  }
  // Each colour bar says its range, so "Export view" says it too.
  const ColourRange own = request.fixed ? ColourRange::Fixed : ColourRange::Own;
  for (HeatmapData* d : {&synced, &expected, &difference}) noteColourRange(*d, own);
  set->synced = std::make_shared<const HeatmapData>(std::move(synced));
  set->expected = std::make_shared<const HeatmapData>(std::move(expected));
  set->difference = std::make_shared<const HeatmapData>(std::move(difference));
  return set;
}

ViewSetPtr prepareRanks(const Evaluation& e, const ViewSet& views, const std::vector<int>& ranks,
                        const std::function<bool()>& cancelled) {
  auto set = std::make_shared<ViewSet>(views);
  std::vector<int> missing;
  for (int r : ranks)
    if (r >= 0 && size_t(r) < set->ranks.size() && !set->ranks[size_t(r)]) missing.push_back(r);
  if (missing.empty()) return set;
  // The axis of the maps already made (their label widths measured), when one has them.
  ClassAxis axis = classAxis(e, views.request.matrix.order);
  if (views.synced && views.synced->nameWidths) {
    axis.nameWidths = views.synced->nameWidths;
  } else {
    for (const QFont& font : views.request.labelFonts) axis.nameWidths->widest(font, axis.names);
  }
  std::vector<HeatmapData> maps(missing.size());
  const bool done = inTwoHalves(int(missing.size()), cancelled, [&](int k) {
    maps[size_t(k)] = rankHeatmap(e, missing[size_t(k)], views.request.matrix, axis);
  });
  if (!done) return nullptr;
  for (size_t k = 0; k < missing.size(); ++k) {
    finishRank(maps[k], views.ranges.ranks, views.request);
    set->ranks[size_t(missing[k])] = std::make_shared<const HeatmapData>(std::move(maps[k]));
  }
  return set;
}

}  // namespace shardlens::render

#pragma once
// The most confused classes at a glance, for a matrix too large to read whole (1000
// classes): the reported matrix cut to its most confused classes, in the order of
// order_by_confusion (core/report/confusion_ranking.h), so the largest confusions sit beside
// the diagonal with their class names readable. Each row keeps its whole sum against its
// class's true count, so a wrong row is marked as in the full matrix. The figure set adds it
// as "most-confused" from kConfusionFigureFrom classes.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/vocabulary/matrix.h"

#include "ui/render/figures.h"
#include "ui/render/heatmap_data.h"

namespace shardlens {
struct Evaluation;
}

namespace shardlens::render {

// Classes the figure shows at most, and from how many classes the figure set has it (below,
// the synced figure shows every class readably).
inline constexpr int kConfusionFigureClasses = 30;
inline constexpr int kConfusionFigureFrom = 13;

// `ranked` (the evaluation's ranked matrix: core/report/confusion_ranking.h) cut to the rows
// and columns of `classes`, in that order, each row keeping its whole sum and its check
// against the class's true count; class ids and names as the whole matrix's.
HeatmapData classesHeatmap(const Evaluation& e, const Matrix& ranked,
                           const std::vector<int32_t>& classes, const QString& title);

// The reported matrix (or what the ranks counted, never synced) cut to its `shown` most
// confused classes; no cells (`emptyText` says why) when nothing was counted.
HeatmapData mostConfusedHeatmap(const Evaluation& e, int shown = kConfusionFigureClasses);

// One heatmap as a figure of the set: titled as the set's figures (figureTitle), full-size
// panel with axis titles and class names.
Figure singleHeatmapFigure(const Evaluation& e, HeatmapData d, const HeatmapStyle& style);

// The figure of mostConfusedHeatmap, titled as the set's figures; nothing when the evaluation
// has too few classes for it, nothing counted or no two classes confused.
std::optional<Figure> mostConfusedFigure(const Evaluation& e, const HeatmapStyle& style);

}  // namespace shardlens::render

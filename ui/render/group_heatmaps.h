#pragma once
// The heatmaps of a matrix read by class groups (the dataset's ",hierarchy=FILE":
// core/report/class_groups.h): the matrix collapsed to its groups, each group's row checked
// against the sum of its classes' true counts, and one group expanded to its classes (their
// rows and columns, each row's whole sum checked against its class's true count). The
// Groups dock shows them, and the figure set has the collapsed one as "groups".
#include <optional>

#include "ui/render/figures.h"
#include "ui/render/heatmap_data.h"

namespace shardlens {
struct Evaluation;
}

namespace shardlens::render {

// The collapsed matrix, a group a row and a column; no cells (`emptyText` says why) without
// a hierarchy or a counted matrix.
HeatmapData groupsHeatmap(const Evaluation& e);
// Group `group`'s classes: their cells among themselves, each row's whole sum and check.
HeatmapData groupMembersHeatmap(const Evaluation& e, int group);
// The figure of groupsHeatmap, titled as the set's figures; nothing without a hierarchy.
std::optional<Figure> groupsFigure(const Evaluation& e, const HeatmapStyle& style);

}  // namespace shardlens::render

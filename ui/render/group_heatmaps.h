#pragma once
// The heatmaps of a matrix read by class groups (the dataset's ",hierarchy=FILE":
// core/report/class_groups.h), level by level: the matrix collapsed to one level's groups,
// each group's row checked against the sum of its classes' true counts, and one group drilled
// into: its groups on the level below (or, below the deepest level, its classes), their rows
// and columns among themselves, each row's whole sum checked. The Groups dock shows them, and
// the figure set has each level's collapsed matrix ("groups", "groups-level-2", ...).
#include <QString>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ui/render/figures.h"
#include "ui/render/heatmap_data.h"

namespace shardlens {
struct ClassHierarchy;
struct Evaluation;
}  // namespace shardlens

namespace shardlens::render {

// The heatmaps of groups carry their names and no class ids (`classOf` empty): a narrow view
// then elides the names rather than numbering rows whose numbers mean nothing to a reader.
// The matrix collapsed to level `level` (0 the top), a group a row and a column in the level's
// order; no cells (`emptyText` says why) without a hierarchy, a counted
// matrix or such a level.
HeatmapData groupsHeatmap(const Evaluation& e, int level = 0);
// Group `group` of level `level` drilled into: its groups on level `level` + 1 (in the order of
// groupChildren) or, on the deepest level, its classes (classOf: their class ids); their cells
// among themselves, each row's whole sum and check.
HeatmapData groupChildrenHeatmap(const Evaluation& e, int level, int group);
// The groups on level `level` + 1 whose classes are in group `group` of level `level`,
// ascending; empty on the deepest level.
std::vector<int32_t> groupChildren(const ClassHierarchy& h, int level, int group);
// The figure file of level `level` (0 the top): "groups" for the top, "groups-level-2",
// "groups-level-3", ... below (the level numbered from 1, as the report and the GUI say it).
QString groupsFigureName(int level);
// The figure of level `level`'s collapsed matrix, titled as the set's figures; nothing without
// a hierarchy, such a level or a counted matrix.
std::optional<Figure> groupsFigure(const Evaluation& e, const HeatmapStyle& style, int level);
// Every level's figure, top first, with its name.
std::vector<std::pair<QString, Figure>> groupsFigures(const Evaluation& e,
                                                      const HeatmapStyle& style);

}  // namespace shardlens::render

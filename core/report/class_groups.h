#pragma once
// A matrix of many classes read by their groups (the dataset's ",hierarchy=FILE":
// core/io/class_hierarchy.h): at each level of the hierarchy, rows and columns summed over
// each group's classes, and the row check applied to the groups, a group's true count the sum
// of its classes'. A group can be right while two of its classes (or subgroups) are wrong: a
// sample counted in one instead of a sibling cancels out one level up. So every level is
// checked and shown, each on its own.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnosis/row_check.h"
#include "core/evaluation/evaluation.h"
#include "core/io/class_hierarchy.h"
#include "core/vocabulary/matrix.h"

namespace shardlens {

// G x G: cell (g, h) the sum of m's cells whose true class is in g and predicted class in h.
// `m` must have as many classes as the level (else an empty G x G matrix).
Matrix collapse_classes(const Matrix& m, const ClassGroups& level);
// Each group's true count: the sum of its classes' (a class past the end of `counts` is 0).
std::vector<int64_t> collapse_counts(const std::vector<int64_t>& counts, const ClassGroups& level);

// The row check of level `level`'s groups (0 the top): the ranked matrix (the synced one,
// else what the ranks counted together) collapsed, against the groups' true counts. Empty (0
// rows) without groups or for a level the hierarchy does not have.
RowCheck check_group_rows(const Evaluation& e, int32_t level = 0);
// The row check of every level, top first (the ranked matrix built once); empty without groups.
std::vector<RowCheck> check_group_levels(const Evaluation& e);

// Per level, "Groups (hierarchy, level L of D): G groups of C classes; W groups wrong, K
// classes wrong" and its wrong groups, worst first (at most 10 a level), as the text report
// prints them; empty without groups.
std::string class_groups_text(const Evaluation& e);
// {"depth": D, "levels": [per level, top first: {"names", "parents" (index in the level
// above, -1 at the top), "group_of" (per class), "row_sums": {"observed", "expected",
// "mismatched"}}], and the top level's "names", "group_of", "row_sums" as before levels were
// read}; null without groups.
nlohmann::json class_groups_json(const Evaluation& e);

}  // namespace shardlens

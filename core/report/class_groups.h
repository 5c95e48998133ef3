#pragma once
// A matrix of many classes read by their groups (the dataset's ",hierarchy=FILE":
// core/io/class_hierarchy.h): rows and columns summed over each group's classes, and the row
// check applied to the groups too, a group's true count the sum of its classes'. A group can
// be right while two of its classes are wrong (a sample counted in one class instead of a
// sibling cancels out), and wrong only when its classes' errors do not cancel: both levels
// are shown.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnosis/row_check.h"
#include "core/evaluation/evaluation.h"
#include "core/io/class_hierarchy.h"
#include "core/vocabulary/matrix.h"

namespace shardlens {

// G x G: cell (g, h) the sum of m's cells whose true class is in g and predicted class in h.
// `m` must have as many classes as the hierarchy.
Matrix collapse_classes(const Matrix& m, const ClassHierarchy& h);
// Each group's true count: the sum of its classes' (a class past the end of `counts` is 0).
std::vector<int64_t> collapse_counts(const std::vector<int64_t>& counts, const ClassHierarchy& h);

// The row check of the groups: the ranked matrix (the synced one, else what the ranks counted
// together) collapsed, against the groups' true counts. Empty (0 rows) without groups.
RowCheck check_group_rows(const Evaluation& e);

// "Groups (hierarchy): G groups of C classes; W groups wrong" and the wrong groups, worst first
// (at most 10), as the text report prints them; empty without groups.
std::string class_groups_text(const Evaluation& e);
// {"names": [group names], "group_of": [per class], "row_sums": {"observed", "expected",
//  "mismatched"}} of the groups; null without groups.
nlohmann::json class_groups_json(const Evaluation& e);

}  // namespace shardlens

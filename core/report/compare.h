#pragma once
// Two evaluations side by side (`shardlens-cli compare A B`, the GUI's Compare with…): a
// simulation, a run, or one epoch of a run, against another. What counts is what each
// reported: equal matrices, or the cells and rows where they differ.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/evaluation/evaluation.h"

namespace shardlens {

struct Comparison {
  bool comparable = true;  // same classes; otherwise `why` says what differs
  std::string why;
  bool equal = false;           // both reported, and the reported matrices are equal
  Matrix difference;            // B's reported minus A's (when both reported)
  std::vector<int32_t> rows;    // rows whose sums differ
  int64_t cells_differing = 0;  // cells that differ
  // Rank by rank (same world size): the ranks whose own matrices differ.
  bool same_world_size = true;
  std::vector<int> ranks_differing;
  bool ranks_equal() const { return same_world_size && ranks_differing.empty(); }
};

// `a_name`/`b_name` label the two sides in reports.
Comparison compare_evaluations(const Evaluation& a, const Evaluation& b);

nlohmann::json comparison_json(const Evaluation& a, const Evaluation& b, const Comparison& c,
                               const std::string& a_name, const std::string& b_name);
std::string comparison_text(const Evaluation& a, const Evaluation& b, const Comparison& c,
                            const std::string& a_name, const std::string& b_name);

}  // namespace shardlens

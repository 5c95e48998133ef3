#pragma once
// How each class's row sum strays from its true count, evaluation by evaluation: the seed
// lesson's own symptom (a shuffled, batch-limited evaluation counts other samples each
// epoch). The drift figure (GUI and `export`) draws it as a class x epoch heatmap.
#include <string>
#include <vector>

#include "core/evaluation/evaluation.h"

namespace shardlens {

struct RowDrift {
  int classes = 0;
  std::vector<std::string> columns;  // one per evaluation: "epoch 2" (evaluation_label)
  std::vector<double> off;           // classes x columns, row-major: row sum - true count
  std::vector<bool> wrong;           // classes x columns: the evaluation's row check says wrong
  double worst = 0;                  // the largest |off|
  // Class ids, the most drifting first (the spread of a class's row over the evaluations,
  // plus how far it strays); ties in class order.
  std::vector<int> by_drift;

  double at(int cls, size_t column) const { return off[size_t(cls) * columns.size() + column]; }
  bool wrong_at(int cls, size_t column) const {
    const size_t i = size_t(cls) * columns.size() + column;
    return i < wrong.size() && wrong[i];
  }
  // Whether the class's row is wrong in any of the evaluations.
  bool ever_wrong(int cls) const;
};

// The evaluations of one run, in order, read off each one's row check: the synced matrix's
// row sums, or what the ranks counted for an evaluation that never synchronized.
RowDrift row_drift(const std::vector<const Evaluation*>& evaluations);

}  // namespace shardlens

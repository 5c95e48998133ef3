#pragma once
// A thousand classes read at a glance: which cells of the reported matrix hold the most
// confusion (fastai's `most_confused`: off-diagonal cells, largest first, as (true, predicted,
// count)), which rows miss their true count the most, and which ranks put the counts there.
// The text and JSON reports, the GUI's "Most confused" dock and its figure read these; the
// heatmaps' "confusion" class order is order_by_confusion.
// The matrix ranked is the one the row check reads (Evaluation::row_check): the synced
// matrix, or what the ranks counted together for a run that never synchronized.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/evaluation/evaluation.h"
#include "core/vocabulary/matrix.h"

namespace shardlens {

// How many pairs and rows the text and JSON reports list.
inline constexpr size_t kReportedConfusions = 10;

// One rank's share of a cell or a row.
struct RankCount {
  int32_t rank = 0;
  double count = 0;
  bool operator==(const RankCount&) const = default;
};

struct ConfusedPair {
  int32_t true_class = 0;
  int32_t predicted = 0;
  double count = 0;                // in the ranked matrix
  std::optional<double> expected;  // the expected matrix's cell, when it is known
  std::vector<RankCount> ranks;    // each rank's count of the cell, the non-zero ones by rank
};

struct WrongRow {
  int32_t row = 0;
  double observed = 0;           // the row's sum
  int64_t truth = 0;             // its class's true count
  double off = 0;                // observed - truth
  std::vector<RankCount> ranks;  // each rank's row sum, the non-zero ones by rank
  // Each rank's records of this row's samples that were counted more than once (padding
  // duplicates, overlapping shards: both the first count and the repeat), the non-zero ones
  // by rank. Read from the records (Repeats::FromRecords) when the evaluation holds them (not
  // after release_samples) and they are one cell each, up to kMaxAttributedRecords; else
  // empty. The GUI's Most confused page shows it; the reports do not.
  std::vector<RankCount> repeated;
};

// Beyond this many records the wrong rows' repeats are not attributed (a walk on the GUI
// thread when the dock is shown).
inline constexpr int64_t kMaxAttributedRecords = 20'000'000;

// The off-diagonal cells of `m` holding at least `min_count`, the largest first (ties by true
// class, then predicted class), at most `top`; NaN cells are left out. Counts only: no ranks.
std::vector<ConfusedPair> most_confused(const Matrix& m, size_t top, double min_count = 1);

// Every class id, the most confused first: the classes in the order they first appear when
// walking most_confused(m, all) and taking each pair's true class, then its predicted class;
// then the classes with no confusion, by id. A large confusion's two classes are neighbours.
std::vector<int32_t> order_by_confusion(const Matrix& m);

struct ConfusionRanking {
  std::vector<ConfusedPair> pairs;   // the most confused, at most `top`
  size_t confused_cells = 0;         // off-diagonal cells holding at least min_count
  std::vector<WrongRow> wrong_rows;  // the row check's wrong rows, worst first, at most `top`
  size_t wrong_total = 0;            // how many rows are wrong in all
};

// The matrix the ranking reads (see above); empty (0 classes) when there is nothing counted.
Matrix ranked_matrix(const Evaluation& e);

// Whether the wrong rows' repeats (WrongRow::repeated) are read from the records. The reports
// skip it: what they say must not depend on whether the samples were released first.
enum class Repeats { Skip, FromRecords };

// The `top` most confused pairs (with at least `min_count`) and the `top` worst wrong rows of
// `e`, each with the ranks that counted there.
ConfusionRanking rank_confusion(const Evaluation& e, size_t top, double min_count = 1,
                                Repeats repeats = Repeats::Skip);

// "Most confused pairs" and "Wrong rows, worst first", as the text report prints them (class
// names, each pair's expected count, at most 8 ranks a line).
std::string confusion_ranking_text(const Evaluation& e, const ConfusionRanking& ranking);
// {"most_confused": [{"true", "predicted", "count", "expected", "ranks": [{"rank", "count"}]}],
//  "confused_cells", "wrong_rows": [{"class", "observed", "expected", "difference", "ranks"}],
//  "wrong_total"}
nlohmann::json confusion_ranking_json(const ConfusionRanking& ranking);

}  // namespace shardlens

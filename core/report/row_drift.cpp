#include "core/report/row_drift.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace shardlens {

bool RowDrift::ever_wrong(int cls) const {
  for (size_t k = 0; k < columns.size(); ++k)
    if (wrong_at(cls, k)) return true;
  return false;
}

RowDrift row_drift(const std::vector<const Evaluation*>& evaluations) {
  RowDrift d;
  if (evaluations.empty()) return d;
  d.classes = evaluations.front()->classes();
  const size_t columns = evaluations.size();
  d.off.assign(size_t(d.classes) * columns, 0.0);
  d.wrong.assign(size_t(d.classes) * columns, false);
  for (size_t k = 0; k < columns; ++k) {
    const Evaluation& e = *evaluations[k];
    const RowCheck& rows = e.row_check;
    d.columns.push_back(evaluation_label(e));
    for (int c = 0; c < d.classes; ++c) {
      // A class the evaluation has no row for counted nothing.
      const double truth =
          size_t(c) < e.meta.class_counts.size() ? double(e.meta.class_counts[size_t(c)]) : 0.0;
      const double off = c < rows.rows() ? rows.off[size_t(c)] : -truth;
      d.off[size_t(c) * columns + k] = off;
      d.wrong[size_t(c) * columns + k] = c < rows.rows() ? rows.is_wrong(c) : truth != 0;
      if (std::isfinite(off)) d.worst = std::max(d.worst, std::abs(off));
    }
  }
  std::vector<double> score(size_t(d.classes), 0.0);
  for (int c = 0; c < d.classes; ++c) {
    const double* row = d.off.data() + size_t(c) * columns;
    const auto [lo, hi] = std::minmax_element(row, row + columns);
    score[size_t(c)] = *hi - *lo + std::max(std::abs(*hi), std::abs(*lo));
  }
  d.by_drift.resize(size_t(d.classes));
  std::iota(d.by_drift.begin(), d.by_drift.end(), 0);
  std::stable_sort(d.by_drift.begin(), d.by_drift.end(),
                   [&](int a, int b) { return score[size_t(a)] > score[size_t(b)]; });
  return d;
}

}  // namespace shardlens

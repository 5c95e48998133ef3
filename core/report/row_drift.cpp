#include "core/report/row_drift.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace shardlens {

RowDrift row_drift(const std::vector<const Evaluation*>& evaluations) {
  RowDrift d;
  if (evaluations.empty()) return d;
  d.classes = evaluations.front()->classes();
  const size_t columns = evaluations.size();
  d.off.assign(size_t(d.classes) * columns, 0.0);
  for (size_t k = 0; k < columns; ++k) {
    const Evaluation& e = *evaluations[k];
    d.columns.push_back(evaluation_label(e));
    std::vector<double> rows(size_t(d.classes), 0.0);
    if (e.synced) {
      rows = e.synced->row_sums();
    } else {
      for (const Matrix& m : e.per_rank) {
        const auto sums = m.row_sums();
        for (size_t c = 0; c < rows.size() && c < sums.size(); ++c) rows[c] += sums[c];
      }
    }
    for (int c = 0; c < d.classes; ++c) {
      const double truth =
          size_t(c) < e.meta.class_counts.size() ? double(e.meta.class_counts[size_t(c)]) : 0.0;
      const double off = size_t(c) < rows.size() ? rows[size_t(c)] - truth : -truth;
      d.off[size_t(c) * columns + k] = off;
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

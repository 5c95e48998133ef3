#include "ui/render/heatmap_source.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "core/report/confusion_ranking.h"
#include "core/report/verdict.h"
#include "ui/render/shown_text.h"
#include "ui/render/task_words.h"

namespace shardlens::render {

QString classOrderName(ClassOrder order) {
  switch (order) {
    case ClassOrder::Name:
      return QStringLiteral("name");
    case ClassOrder::Count:
      return QStringLiteral("count");
    case ClassOrder::Error:
      return QStringLiteral("error");
    case ClassOrder::Confusion:
      return QStringLiteral("confusion");
    case ClassOrder::Index:
      break;
  }
  return QStringLiteral("index");
}

ClassOrder parseClassOrder(const QString& name) {
  const QString n = name.trimmed().toLower();
  if (n == QLatin1String("name")) return ClassOrder::Name;
  if (n == QLatin1String("count")) return ClassOrder::Count;
  if (n == QLatin1String("error")) return ClassOrder::Error;
  if (n == QLatin1String("confusion")) return ClassOrder::Confusion;
  return ClassOrder::Index;
}

QStringList classOrderNames() {
  return {"index", "name", "count", "error", "confusion"};
}

std::vector<double> trueRowCounts(const Evaluation& e) {
  const std::vector<int64_t>& truth = e.row_check.truth;
  return std::vector<double>(truth.begin(), truth.end());
}

QString expectedUnknownText(const Evaluation& e) {
  return e.expected_missing.empty()
             ? QStringLiteral("Expected unknown: not every prediction was recorded")
             : QStringLiteral("Expected unknown: %1").arg(shownText(e.expected_missing));
}

std::vector<QString> classNames(const Evaluation& e) {
  std::vector<QString> names;
  names.reserve(e.meta.class_names.size());
  for (const std::string& name : e.meta.class_names) names.push_back(shownText(name));
  return names;
}

std::vector<int> classOrder(const Evaluation& e, ClassOrder order) {
  const int c = e.classes();
  std::vector<int> idx(static_cast<size_t>(c));
  std::iota(idx.begin(), idx.end(), 0);
  if (order == ClassOrder::Name) {
    const auto names = classNames(e);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
      return QString::localeAwareCompare(names[size_t(a)], names[size_t(b)]) < 0;
    });
  } else if (order == ClassOrder::Count) {
    const auto& n = e.meta.class_counts;
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
      const auto ca = size_t(a) < n.size() ? n[size_t(a)] : 0;
      const auto cb = size_t(b) < n.size() ? n[size_t(b)] : 0;
      return ca > cb;
    });
  } else if (order == ClassOrder::Error && e.synced) {
    idx.assign(e.row_check.by_error.begin(), e.row_check.by_error.end());
  } else if (order == ClassOrder::Confusion) {
    const std::vector<int32_t> by_confusion =
        e.synced ? order_by_confusion(*e.synced) : order_by_confusion(ranked_matrix(e));
    if (by_confusion.size() == idx.size()) idx.assign(by_confusion.begin(), by_confusion.end());
  }
  return idx;
}

namespace {

// Below this share of non-zero cells a heatmap keeps its cells sparse.
constexpr double kSparseDensity = 0.25;

}  // namespace

// One pass over the matrices in display-row order: the sums of `counts` and the non-zero
// cells of `values` (sorted into display columns), then the dense layout from those when
// the matrix is dense. At 64 ranks of 1000 classes this is the preparation's whole cost.
HeatmapData makeHeatmap(const QString& title, const Matrix& values, const Matrix& counts,
                        const std::vector<int>& order, const std::vector<QString>& names) {
  HeatmapData d;
  d.title = title;
  d.classes = values.classes;
  d.classOf = order;
  const size_t c = static_cast<size_t>(d.classes);
  d.names.resize(c);
  d.rowObserved.resize(c);
  std::vector<double> cols(c, 0.0);  // by class id
  std::vector<int32_t> position(c);  // class id -> display position
  bool identity = true;
  for (size_t i = 0; i < c; ++i) {
    position[size_t(order[i])] = int32_t(i);
    identity = identity && order[i] == int(i);
    d.names[i] = names[size_t(order[i])];
  }
  bool integral = true;
  double top = 0;
  d.rowStart.reserve(c + 1);
  std::vector<std::pair<int32_t, double>> row;
  for (size_t i = 0; i < c; ++i) {
    const double* countRow = counts.cells.data() + size_t(order[i]) * c;
    double total = 0;
    for (size_t k = 0; k < c; ++k) {
      total += countRow[k];
      cols[k] += countRow[k];
    }
    d.rowObserved[i] = total;
    d.rowStart.push_back(uint32_t(d.sparseCols.size()));
    const double* valueRow = values.cells.data() + size_t(order[i]) * c;
    row.clear();
    for (size_t k = 0; k < c; ++k)
      if (valueRow[k] != 0) row.emplace_back(position[k], valueRow[k]);
    if (!identity) std::sort(row.begin(), row.end());
    for (const auto& [col, v] : row) {
      integral = integral && v == std::floor(v);
      if (std::isfinite(v)) top = std::max(top, std::abs(v));
      d.sparseCols.push_back(col);
      d.sparseValues.push_back(v);
    }
  }
  d.rowStart.push_back(uint32_t(d.sparseCols.size()));
  d.colObserved.resize(c);
  for (size_t j = 0; j < c; ++j) d.colObserved[j] = cols[size_t(order[j])];
  d.integral = integral;
  d.valueMax = top;
  if (double(d.sparseCols.size()) > kSparseDensity * double(c * c)) {
    d.values = d.denseValues();
    d.rowStart.clear();
    d.sparseCols = {};
    d.sparseValues = {};
  }
  return d;
}

namespace {

template <class T>
std::vector<T> permuted(const std::vector<T>& v, const std::vector<int>& order) {
  std::vector<T> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = v[size_t(order[i])];
  return out;
}

}  // namespace

void describeValues(HeatmapData& d, const Evaluation& e, Normalization n, bool difference) {
  QString what;
  switch (n) {
    case Normalization::None:
      // Counts in the task's unit ("pixels", "tokens"); a reported matrix of fractions summed
      // (normalize-then-sum) holds no counts.
      what = !d.integral      ? QStringLiteral("value")
             : countsCells(e) ? countsWord(e)
                              : QStringLiteral("count");
      break;
    case Normalization::True:
      what = QStringLiteral("fraction of row");
      break;
    case Normalization::Pred:
      what = QStringLiteral("fraction of column");
      break;
    case Normalization::All:
      what = QStringLiteral("fraction of total");
      break;
  }
  // Short: the label runs along the colour bar, which is small in the window's side views.
  d.valueLabel = difference ? QStringLiteral("Δ ") + what : what;
  d.countsManyPerSample = n == Normalization::None && countsPerSample(e);
}

ClassAxis classAxis(const Evaluation& e, ClassOrder order) {
  return {classOrder(e, order), classNames(e), std::make_shared<LabelWidths>()};
}

namespace {

// The matrix as displayed: itself without a normalization (no copy), else normalized.
struct Displayed {
  std::optional<Matrix> normalized;
  const Matrix* matrix;
  Displayed(const Matrix& m, Normalization n)
      : normalized(n == Normalization::None ? std::nullopt : std::optional(normalize(m, n))),
        matrix(normalized ? &*normalized : &m) {}
};

HeatmapData viewOf(const Evaluation& e, const QString& title, const Matrix& counts,
                   const MatrixOptions& o, const ClassAxis& axis) {
  const Displayed shown(counts, o.normalization);
  HeatmapData d = render::makeHeatmap(title, *shown.matrix, counts, axis.order, axis.names);
  d.nameWidths = axis.nameWidths;
  describeValues(d, e, o.normalization, false);
  return d;
}

bool allZero(const Matrix& m) {
  return std::all_of(m.cells.begin(), m.cells.end(), [](double v) { return v == 0; });
}

}  // namespace

HeatmapData rankHeatmap(const Evaluation& e, int rank, const MatrixOptions& o,
                        const ClassAxis& axis) {
  const Matrix& m = e.per_rank[size_t(rank)];
  const bool failed = std::find(e.meta.failed_ranks.begin(), e.meta.failed_ranks.end(), rank) !=
                      e.meta.failed_ranks.end();
  // A rank that reported a matrix other than the logged one was not synchronized.
  const bool ownReport = size_t(rank) < e.reported_per_rank.size() &&
                         e.reported_per_rank[size_t(rank)] && e.synced &&
                         !(*e.reported_per_rank[size_t(rank)] == *e.synced);
  const QString title = failed      ? QStringLiteral("Rank %1 (failed)").arg(rank)
                        : ownReport ? QStringLiteral("Rank %1 (reported its own matrix)").arg(rank)
                                    : QStringLiteral("Rank %1").arg(rank);
  if (failed && allZero(m))
    return emptyHeatmap(title, QStringLiteral("Nothing arrived: the rank failed first"));
  return viewOf(e, title, m, o, axis);
}

HeatmapData rankHeatmap(const Evaluation& e, int rank, const MatrixOptions& o) {
  return rankHeatmap(e, rank, o, classAxis(e, o.order));
}

void shareRange(std::vector<HeatmapData>& views) {
  double top = 0;
  for (const HeatmapData& d : views) top = std::max(top, d.valueMax);
  for (HeatmapData& d : views) d.valueMax = top;
}

std::vector<HeatmapData> rankHeatmaps(const Evaluation& e, const MatrixOptions& o) {
  const ClassAxis axis = classAxis(e, o.order);
  std::vector<HeatmapData> out;
  for (int r = 0; r < static_cast<int>(e.per_rank.size()); ++r)
    out.push_back(rankHeatmap(e, r, o, axis));
  shareRange(out);
  return out;
}

HeatmapData emptyHeatmap(const QString& title, const QString& why) {
  HeatmapData d;
  d.title = title;
  d.emptyText = why;
  return d;
}

HeatmapData syncedHeatmap(const Evaluation& e, const MatrixOptions& o, const ClassAxis& axis) {
  const QString title = shownText(synced_title(e));
  if (!e.synced) return emptyHeatmap(title, syncedMissingText(e));
  HeatmapData d = viewOf(e, title, *e.synced, o, axis);
  // Rows are marked "≠ expected" only against a known expected matrix: without one (a run
  // that never evaluated some samples) the diagnosis says what is missing, the view no more.
  if (!e.expected) return d;
  d.rowExpected = permuted(trueRowCounts(e), axis.order);
  d.rowWrong = permuted(e.row_check.wrong, axis.order);
  return d;
}

HeatmapData syncedHeatmap(const Evaluation& e, const MatrixOptions& o) {
  return syncedHeatmap(e, o, classAxis(e, o.order));
}

QString syncedMissingText(const Evaluation& e) {
  return QStringLiteral("No synchronized matrix: %1").arg(shownText(e.synced_missing));
}

namespace {

HeatmapData unknown(const Evaluation& e, const QString& title) {
  return emptyHeatmap(title, expectedUnknownText(e));
}

}  // namespace

HeatmapData expectedHeatmap(const Evaluation& e, const MatrixOptions& o, const ClassAxis& axis) {
  if (!e.expected) return unknown(e, QStringLiteral("Expected (single process)"));
  HeatmapData d = viewOf(e, QStringLiteral("Expected (single process)"), *e.expected, o, axis);
  d.rowExpected = d.rowObserved;  // the expected matrix's rows are the true counts
  return d;
}

HeatmapData expectedHeatmap(const Evaluation& e, const MatrixOptions& o) {
  return expectedHeatmap(e, o, classAxis(e, o.order));
}

HeatmapData differenceHeatmap(const Evaluation& e, const MatrixOptions& o, const ClassAxis& axis) {
  const QString title = shownText(difference_title(e));
  if (!e.synced) return emptyHeatmap(title, syncedMissingText(e));
  if (!e.expected) return unknown(e, title);
  Matrix diff = normalize(*e.synced, o.normalization);
  const Displayed exp(*e.expected, o.normalization);
  for (size_t i = 0; i < diff.cells.size(); ++i) diff.cells[i] -= exp.matrix->cells[i];
  // The difference of counts; without a normalization that is `diff` itself.
  const std::optional<Matrix> counts =
      o.normalization == Normalization::None ? std::nullopt : e.difference();
  HeatmapData d = makeHeatmap(title, diff, counts ? *counts : diff, axis.order, axis.names);
  d.nameWidths = axis.nameWidths;
  d.diverging = true;
  describeValues(d, e, o.normalization, true);
  // A correct row differs by zero in total; the marks are the synced rows' check.
  d.rowExpected.assign(size_t(d.classes), 0.0);
  d.rowWrong = permuted(e.row_check.wrong, axis.order);
  return d;
}

HeatmapData differenceHeatmap(const Evaluation& e, const MatrixOptions& o) {
  return differenceHeatmap(e, o, classAxis(e, o.order));
}

}  // namespace shardlens::render

#include "ui/render/heatmap_source.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace shardlens::render {

QString classOrderName(ClassOrder order) {
  switch (order) {
    case ClassOrder::Name:
      return QStringLiteral("name");
    case ClassOrder::Count:
      return QStringLiteral("count");
    case ClassOrder::Error:
      return QStringLiteral("error");
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
  return ClassOrder::Index;
}

QStringList classOrderNames() {
  return {"index", "name", "count", "error"};
}

std::vector<double> trueRowCounts(const Evaluation& e) {
  if (e.expected) return e.expected->row_sums();
  std::vector<double> counts(size_t(e.classes()), 0.0);
  for (size_t c = 0; c < counts.size() && c < e.meta.class_counts.size(); ++c)
    counts[c] = double(e.meta.class_counts[c]);
  return counts;
}

QString expectedUnknownText(const Evaluation& e) {
  return e.expected_missing.empty()
             ? QStringLiteral("Expected unknown: not every prediction was recorded")
             : QStringLiteral("Expected unknown: %1")
                   .arg(QString::fromStdString(e.expected_missing));
}

std::vector<QString> classNames(const Evaluation& e) {
  std::vector<QString> names;
  names.reserve(e.meta.class_names.size());
  for (const std::string& name : e.meta.class_names) names.push_back(QString::fromStdString(name));
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
    const auto obs = e.synced->row_sums();
    const auto exp = trueRowCounts(e);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
      return std::abs(obs[size_t(a)] - exp[size_t(a)]) > std::abs(obs[size_t(b)] - exp[size_t(b)]);
    });
  }
  return idx;
}

HeatmapData makeHeatmap(const QString& title, const Matrix& values, const Matrix& counts,
                        const std::vector<int>& order, const std::vector<QString>& names) {
  HeatmapData d;
  d.title = title;
  d.classes = values.classes;
  d.classOf = order;
  const size_t c = static_cast<size_t>(d.classes);
  d.values.resize(c * c);
  d.names.resize(c);
  const auto rows = counts.row_sums();
  const auto cols = counts.col_sums();
  d.rowObserved.resize(c);
  d.colObserved.resize(c);
  bool integral = true;
  for (size_t i = 0; i < c; ++i) {
    const int ci = order[i];
    d.names[i] = names[size_t(ci)];
    d.rowObserved[i] = rows[size_t(ci)];
    d.colObserved[i] = cols[size_t(ci)];
    for (size_t j = 0; j < c; ++j) {
      const double v = values.at(ci, order[j]);
      d.values[i * c + j] = v;
      integral = integral && v == std::floor(v);
    }
  }
  d.integral = integral;
  d.valueMax = d.maxAbsValue();
  return d;
}

namespace {

// What the colour bar measures, so a figure reads without its caption (row: torchmetrics'
// normalize="true", column: "pred", total: "all").
QString valueLabel(Normalization n, bool difference) {
  QString what;
  switch (n) {
    case Normalization::None:
      what = QStringLiteral("count");
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
  return difference ? QStringLiteral("Δ ") + what : what;
}

std::vector<double> permuted(const std::vector<double>& v, const std::vector<int>& order) {
  std::vector<double> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = v[size_t(order[i])];
  return out;
}

}  // namespace

HeatmapData rankHeatmap(const Evaluation& e, int rank, const MatrixOptions& o) {
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
  const bool empty = std::all_of(m.cells.begin(), m.cells.end(), [](double v) { return v == 0; });
  if (failed && empty)
    return emptyHeatmap(title, QStringLiteral("Nothing arrived: the rank failed first"));
  HeatmapData d =
      makeHeatmap(title, normalize(m, o.normalization), m, classOrder(e, o.order), classNames(e));
  d.valueLabel = valueLabel(o.normalization, false);
  return d;
}

std::vector<HeatmapData> rankHeatmaps(const Evaluation& e, const MatrixOptions& o) {
  std::vector<HeatmapData> out;
  double top = 0;
  for (int r = 0; r < static_cast<int>(e.per_rank.size()); ++r) {
    out.push_back(rankHeatmap(e, r, o));
    top = std::max(top, out.back().valueMax);
  }
  for (auto& d : out) d.valueMax = top;
  return out;
}

HeatmapData emptyHeatmap(const QString& title, const QString& why) {
  HeatmapData d;
  d.title = title;
  d.emptyText = why;
  return d;
}

HeatmapData syncedHeatmap(const Evaluation& e, const MatrixOptions& o) {
  if (!e.synced) return emptyHeatmap(QStringLiteral("Synced (reported)"), syncedMissingText(e));
  const auto order = classOrder(e, o.order);
  HeatmapData d =
      makeHeatmap(QStringLiteral("Synced (reported)"), normalize(*e.synced, o.normalization),
                  *e.synced, order, classNames(e));
  d.rowExpected = permuted(trueRowCounts(e), order);
  d.valueLabel = valueLabel(o.normalization, false);
  return d;
}

QString syncedMissingText(const Evaluation& e) {
  return QStringLiteral("No synchronized matrix: %1").arg(QString::fromStdString(e.synced_missing));
}

namespace {

HeatmapData unknown(const Evaluation& e, const QString& title) {
  return emptyHeatmap(title, expectedUnknownText(e));
}

}  // namespace

HeatmapData expectedHeatmap(const Evaluation& e, const MatrixOptions& o) {
  if (!e.expected) return unknown(e, QStringLiteral("Expected (single process)"));
  const auto order = classOrder(e, o.order);
  HeatmapData d =
      makeHeatmap(QStringLiteral("Expected (single process)"),
                  normalize(*e.expected, o.normalization), *e.expected, order, classNames(e));
  d.rowExpected = permuted(e.expected->row_sums(), order);
  d.valueLabel = valueLabel(o.normalization, false);
  return d;
}

HeatmapData differenceHeatmap(const Evaluation& e, const MatrixOptions& o) {
  if (!e.synced) return emptyHeatmap(QStringLiteral("Synced − expected"), syncedMissingText(e));
  if (!e.expected) return unknown(e, QStringLiteral("Synced − expected"));
  const auto order = classOrder(e, o.order);
  Matrix diff = normalize(*e.synced, o.normalization);
  const Matrix exp = normalize(*e.expected, o.normalization);
  for (size_t i = 0; i < diff.cells.size(); ++i) diff.cells[i] -= exp.cells[i];
  const Matrix counts = *e.difference();
  HeatmapData d =
      makeHeatmap(QStringLiteral("Synced − expected"), diff, counts, order, classNames(e));
  d.diverging = true;
  d.valueLabel = valueLabel(o.normalization, true);
  // A correct row differs by zero in total.
  d.rowExpected.assign(size_t(d.classes), 0.0);
  return d;
}

}  // namespace shardlens::render

#include "ui/render/confusion_figure.h"

#include <algorithm>

#include "core/report/confusion_ranking.h"
#include "ui/render/heatmap_source.h"

namespace shardlens::render {

HeatmapData classesHeatmap(const Evaluation& e, const Matrix& ranked,
                           const std::vector<int32_t>& classes, const QString& title) {
  const int k = int(classes.size());
  Matrix cut(k);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) cut.at(i, j) = ranked.at(classes[size_t(i)], classes[size_t(j)]);
  const std::vector<QString> all = classNames(e);
  std::vector<QString> names(static_cast<size_t>(k));
  std::vector<int> identity(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) {
    names[size_t(i)] = all[size_t(classes[size_t(i)])];
    identity[size_t(i)] = i;
  }
  HeatmapData d = makeHeatmap(title, cut, cut, identity, names);
  describeValues(d, e, Normalization::None, false);
  // Class ids as the whole matrix numbers them, and each row's whole sum and check: a row
  // is wrong or right over all its columns, not the ones cut out.
  d.classOf.assign(classes.begin(), classes.end());
  const RowCheck& check = e.row_check;
  const std::vector<double> cols = ranked.col_sums();
  d.rowExpected.assign(size_t(k), 0.0);
  d.rowWrong.assign(size_t(k), false);
  for (int i = 0; i < k; ++i) {
    const size_t c = size_t(classes[size_t(i)]);
    if (c < check.observed.size()) {
      d.rowObserved[size_t(i)] = check.observed[c];
      d.rowExpected[size_t(i)] = double(check.truth[c]);
      d.rowWrong[size_t(i)] = check.wrong[c];
    }
    d.colObserved[size_t(i)] = cols[c];
  }
  return d;
}

HeatmapData mostConfusedHeatmap(const Evaluation& e, int shown) {
  const Matrix ranked = ranked_matrix(e);
  if (ranked.classes <= 0)
    return emptyHeatmap(QStringLiteral("Most confused classes"),
                        QStringLiteral("Nothing counted: no matrix to rank"));
  std::vector<int32_t> order = order_by_confusion(ranked);
  const int k = std::clamp(shown, 1, ranked.classes);
  order.resize(size_t(k));
  return classesHeatmap(
      e, ranked, order,
      k < ranked.classes
          ? QStringLiteral("Most confused classes: %1 of %2, largest confusions first")
                .arg(k)
                .arg(ranked.classes)
          : QStringLiteral("Classes, largest confusions first"));
}

Figure singleHeatmapFigure(const Evaluation& e, HeatmapData d, const HeatmapStyle& style) {
  d.title = figureTitle(e, d.title);
  Figure f;
  f.style = style;
  f.style.compact = false;
  f.style.indexLabels = false;
  f.panels.push_back(std::move(d));
  return f;
}

std::optional<Figure> mostConfusedFigure(const Evaluation& e, const HeatmapStyle& style) {
  if (e.classes() < kConfusionFigureFrom) return std::nullopt;
  // No two classes confused (a perfect predictor): a figure of "the most confused" would
  // show the first classes by id under a title that says otherwise.
  if (most_confused(ranked_matrix(e), 1).empty()) return std::nullopt;
  HeatmapData d = mostConfusedHeatmap(e);
  if (d.classes <= 0) return std::nullopt;
  noteColourRange(d, ColourRange::Own);  // a figure says its range
  return singleHeatmapFigure(e, std::move(d), style);
}

}  // namespace shardlens::render

#include "ui/render/group_heatmaps.h"

#include "core/report/class_groups.h"
#include "core/report/confusion_ranking.h"
#include "ui/render/confusion_figure.h"
#include "ui/render/heatmap_source.h"
#include "ui/render/shown_text.h"

namespace shardlens::render {

namespace {

QString noGroups() {
  return QStringLiteral("No class groups: add ,hierarchy=FILE to the dataset (a parent per class)");
}

// "level 2 of 3" where the hierarchy has levels, nothing for a one-level file.
QString levelText(const ClassHierarchy& h, int level) {
  return h.depth() > 1 ? QStringLiteral(", level %1 of %2").arg(level + 1).arg(h.depth())
                       : QString();
}

// `groups` (indices of `level`) cut out of the matrix collapsed to `level`: their cells among
// themselves, each row's whole sum and check over every column.
HeatmapData cutGroups(const Evaluation& e, const Matrix& ranked, const ClassGroups& level,
                      const std::vector<int32_t>& groups, const QString& title) {
  const Matrix collapsed = collapse_classes(ranked, level);
  const RowCheck check = check_rows(collapsed, collapse_counts(e.row_check.truth, level));
  const int k = int(groups.size());
  Matrix cut(k);
  std::vector<QString> names(static_cast<size_t>(k));
  std::vector<int> identity(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) cut.at(i, j) = collapsed.at(groups[size_t(i)], groups[size_t(j)]);
    names[size_t(i)] = shownText(level.groups[size_t(groups[size_t(i)])]);
    identity[size_t(i)] = i;
  }
  HeatmapData d = makeHeatmap(title, cut, cut, identity, names);
  d.classOf.clear();                                 // no class ids: see group_heatmaps.h
  describeValues(d, e, Normalization::None, false);  // counts, in the task's unit
  const std::vector<double> cols = collapsed.col_sums();
  d.rowExpected.assign(size_t(k), 0.0);
  d.rowWrong.assign(size_t(k), false);
  for (int i = 0; i < k; ++i) {
    const size_t g = size_t(groups[size_t(i)]);
    d.rowObserved[size_t(i)] = check.observed[g];
    d.rowExpected[size_t(i)] = double(check.truth[g]);
    d.rowWrong[size_t(i)] = check.wrong[g];
    d.colObserved[size_t(i)] = cols[g];
  }
  return d;
}

}  // namespace

HeatmapData groupsHeatmap(const Evaluation& e, int level) {
  const QString title = QStringLiteral("Class groups");
  if (!e.class_groups) return emptyHeatmap(title, noGroups());
  const ClassHierarchy& h = *e.class_groups;
  if (level < 0 || level >= h.depth())
    return emptyHeatmap(title, QStringLiteral("The hierarchy has no level %1").arg(level + 1));
  const Matrix ranked = ranked_matrix(e);
  if (ranked.classes != h.classes())
    return emptyHeatmap(title, QStringLiteral("Nothing counted: no matrix to group"));
  const ClassGroups& groups = h.levels[size_t(level)];
  std::vector<int32_t> all(size_t(groups.size()));
  for (int32_t g = 0; g < groups.size(); ++g) all[size_t(g)] = g;
  return cutGroups(e, ranked, groups, all,
                   QStringLiteral("Class groups%1: %2 groups of %3 classes")
                       .arg(levelText(h, level))
                       .arg(groups.size())
                       .arg(ranked.classes));
}

HeatmapData groupChildrenHeatmap(const Evaluation& e, int level, int group) {
  const QString title = QStringLiteral("Class group");
  if (!e.class_groups) return emptyHeatmap(title, noGroups());
  const ClassHierarchy& h = *e.class_groups;
  if (level < 0 || level >= h.depth() || group < 0 || group >= h.levels[size_t(level)].size())
    return emptyHeatmap(title, QStringLiteral("No such group"));
  const Matrix ranked = ranked_matrix(e);
  if (ranked.classes != h.classes())
    return emptyHeatmap(title, QStringLiteral("Nothing counted: no matrix to group"));
  const ClassGroups& here = h.levels[size_t(level)];
  const QString name = shownText(here.groups[size_t(group)]);
  if (level + 1 == h.depth())
    return classesHeatmap(
        e, ranked, here.members(group),
        QStringLiteral("%1: its classes (rows checked over all columns)").arg(name));
  return cutGroups(e, ranked, h.levels[size_t(level + 1)], groupChildren(h, level, group),
                   QStringLiteral("%1: its groups on level %2 (rows checked over all columns)")
                       .arg(name)
                       .arg(level + 2));
}

std::vector<int32_t> groupChildren(const ClassHierarchy& h, int level, int group) {
  if (level < 0 || level + 1 >= h.depth()) return {};
  // Each group below lies in one group here: the ones holding a class of `group`.
  const ClassGroups& here = h.levels[size_t(level)];
  const ClassGroups& below = h.levels[size_t(level + 1)];
  std::vector<bool> inside(static_cast<size_t>(below.size()), false);
  for (size_t c = 0; c < here.group_of.size(); ++c)
    if (here.group_of[c] == group) inside[size_t(below.group_of[c])] = true;
  std::vector<int32_t> children;
  for (int32_t g = 0; g < below.size(); ++g)
    if (inside[size_t(g)]) children.push_back(g);
  return children;
}

QString groupsFigureName(int level) {
  return level == 0 ? QStringLiteral("groups") : QStringLiteral("groups-level-%1").arg(level + 1);
}

std::optional<Figure> groupsFigure(const Evaluation& e, const HeatmapStyle& style, int level) {
  if (!e.class_groups) return std::nullopt;
  HeatmapData d = groupsHeatmap(e, level);
  if (d.classes <= 0) return std::nullopt;
  noteColourRange(d, ColourRange::Own);  // a figure says its range
  return singleHeatmapFigure(e, std::move(d), style);
}

std::vector<std::pair<QString, Figure>> groupsFigures(const Evaluation& e,
                                                      const HeatmapStyle& style) {
  std::vector<std::pair<QString, Figure>> out;
  for (int level = 0; e.class_groups && level < e.class_groups->depth(); ++level)
    if (auto f = groupsFigure(e, style, level))
      out.emplace_back(groupsFigureName(level), std::move(*f));
  return out;
}

}  // namespace shardlens::render

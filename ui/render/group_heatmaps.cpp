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

}  // namespace

HeatmapData groupsHeatmap(const Evaluation& e) {
  const QString title = QStringLiteral("Class groups");
  if (!e.class_groups) return emptyHeatmap(title, noGroups());
  const ClassHierarchy& h = *e.class_groups;
  const Matrix ranked = ranked_matrix(e);
  if (ranked.classes != int32_t(h.group_of.size()))
    return emptyHeatmap(title, QStringLiteral("Nothing counted: no matrix to group"));
  const Matrix collapsed = collapse_classes(ranked, h);
  std::vector<QString> names;
  std::vector<int> identity;
  for (int32_t g = 0; g < h.size(); ++g) {
    names.push_back(shownText(h.groups[size_t(g)]));
    identity.push_back(g);
  }
  HeatmapData d = makeHeatmap(
      QStringLiteral("Class groups: %1 groups of %2 classes").arg(h.size()).arg(ranked.classes),
      collapsed, collapsed, identity, names);
  const RowCheck check = check_group_rows(e);
  d.rowExpected.assign(check.truth.begin(), check.truth.end());
  d.rowWrong = check.wrong;
  return d;
}

HeatmapData groupMembersHeatmap(const Evaluation& e, int group) {
  if (!e.class_groups || group < 0 || group >= e.class_groups->size())
    return emptyHeatmap(QStringLiteral("Class group"), noGroups());
  const ClassHierarchy& h = *e.class_groups;
  const Matrix ranked = ranked_matrix(e);
  if (ranked.classes != int32_t(h.group_of.size()))
    return emptyHeatmap(QStringLiteral("Class group"),
                        QStringLiteral("Nothing counted: no matrix to group"));
  return classesHeatmap(e, ranked, h.members(group),
                        QStringLiteral("%1: its classes (rows checked over all columns)")
                            .arg(shownText(h.groups[size_t(group)])));
}

std::optional<Figure> groupsFigure(const Evaluation& e, const HeatmapStyle& style) {
  if (!e.class_groups) return std::nullopt;
  HeatmapData d = groupsHeatmap(e);
  if (d.classes <= 0) return std::nullopt;
  return singleHeatmapFigure(e, std::move(d), style);
}

}  // namespace shardlens::render

#include "ui/panels/groups_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QVBoxLayout>
#include <algorithm>

#include "core/report/class_groups.h"
#include "core/report/report.h"
#include "ui/render/group_heatmaps.h"
#include "ui/render/shown_text.h"
#include "ui/views/heatmap_view.h"

namespace shardlens::ui {

namespace {

// A group's item: its level and its index there; a class's item: level -1 and its class id.
constexpr int kLevelRole = Qt::UserRole;
constexpr int kIndexRole = Qt::UserRole + 1;

QString count(double v) {
  return QString::fromStdString(count_text(v));
}

QString difference(double off) {
  return off == 0 ? QStringLiteral("0") : (off > 0 ? QStringLiteral("+") : QString()) + count(off);
}

// One row of the tree: name, "row sum ≠ true count" (= when right, as the heatmaps' row-sum
// column writes it: one column for the two keeps the names readable in a narrow dock) and the
// difference; wrong rows say so in the first column too (greyscale) and are coloured.
constexpr int kColumns = 3;

QTreeWidgetItem* checkedItem(const QString& name, const RowCheck& check, int32_t row, int level,
                             int index) {
  const size_t r = size_t(row);
  const bool wrong = check.wrong[r];
  auto* item = new QTreeWidgetItem({(wrong ? QStringLiteral("⚠ ") : QString()) + name,
                                    count(check.observed[r]) +
                                        (wrong ? QStringLiteral(" ≠ ") : QStringLiteral(" = ")) +
                                        count(double(check.truth[r])),
                                    difference(check.off[r])});
  for (int c = 1; c < kColumns; ++c) item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  if (wrong)
    for (int c = 0; c < kColumns; ++c) item->setForeground(c, QColor(0xc0, 0x20, 0x20));
  item->setData(0, kLevelRole, level);
  item->setData(0, kIndexRole, index);
  return item;
}

// Each row's place in `check`'s worst-first order: sorting by it lists the worst first.
std::vector<int32_t> worstFirstRank(const RowCheck& check) {
  std::vector<int32_t> rank(check.by_error.size());
  for (size_t i = 0; i < check.by_error.size(); ++i) rank[size_t(check.by_error[i])] = int32_t(i);
  return rank;
}

}  // namespace

GroupsPanel::GroupsPanel(QWidget* parent)
    : QWidget(parent),
      m_status(new QLabel(this)),
      m_levelBox(new QComboBox(this)),
      m_up(new QPushButton(this)),
      m_tree(new QTreeWidget(this)),
      m_heatmap(new HeatmapView(this)) {
  setObjectName(QStringLiteral("groupsPanel"));
  m_status->setWordWrap(true);
  m_levelBox->setObjectName(QStringLiteral("groupLevel"));
  m_levelBox->setToolTip(tr("The level of the hierarchy the heatmap collapses the classes to"));
  m_levelBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_levelBox->setMinimumContentsLength(12);
  m_up->setObjectName(QStringLiteral("groupUp"));
  m_up->setToolTip(tr("Back from a group drilled into to the level above"));
  m_tree->setObjectName(QStringLiteral("groupTree"));
  m_tree->setHeaderLabels({tr("Group / class"), tr("Row sum vs true"), tr("Difference")});
  // The names take what the counts leave, nested names a short step a level.
  m_tree->setIndentation(12);
  m_tree->header()->setStretchLastSection(false);
  m_tree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  for (int c = 1; c < kColumns; ++c)
    m_tree->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  m_tree->setToolTip(
      tr("Each group's row sums its classes' rows and is checked against the sum of their true "
         "counts, on every level; expand a group for its subgroups and then its classes, each "
         "checked alone. Click a group: what it holds, in the heatmap"));
  m_heatmap->setObjectName(QStringLiteral("groupHeatmap"));
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(m_tree);
  // Group names are the heatmap's labels (no class numbers to fall back to): where they need
  // more than the dock has, the heatmap scrolls instead of widening the dock.
  auto* scroll = m_heatmapScroll = new QScrollArea(this);
  scroll->setObjectName(QStringLiteral("groupHeatmapScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(m_heatmap);
  split->addWidget(scroll);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* controls = new QHBoxLayout;
  controls->setContentsMargins(0, 0, 0, 0);
  controls->addWidget(m_levelBox, 1);
  controls->addWidget(m_up);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(m_status);
  layout->addLayout(controls);
  layout->addWidget(split, 1);
  connect(m_up, &QPushButton::clicked, this, &GroupsPanel::up);
  connect(m_levelBox, &QComboBox::activated, this, &GroupsPanel::showLevel);
  connect(m_tree, &QTreeWidget::itemClicked, this,
          [this](QTreeWidgetItem* item, int) { treeClicked(item); });
  // A row of a matrix of groups drills into its group; among classes nothing changes.
  connect(m_heatmap, &HeatmapView::cellClicked, this, [this](int row, int) {
    const Evaluation* e = m_result ? &m_result->eval : nullptr;
    if (!e || !e->class_groups || row < 0) return;
    if (m_group < 0) return drillInto(m_level, row);
    const std::vector<int32_t> children = render::groupChildren(*e->class_groups, m_level, m_group);
    if (size_t(row) < children.size()) drillInto(m_level + 1, children[size_t(row)]);
  });
  m_heatmap->setTooltipProvider([this](int row, int col) { return heatmapTooltip(row, col); });
  setResult(nullptr);
}

void GroupsPanel::setResult(const ResultPtr& result) {
  m_result = result;
  m_stale = true;
  if (isVisible() || !result) fill();
}

void GroupsPanel::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (m_stale) fill();
}

void GroupsPanel::fill() {
  m_stale = false;
  const ResultPtr& result = m_result;
  m_tree->clear();
  m_levelBox->clear();
  const Evaluation* e = result ? &result->eval : nullptr;
  if (!e || !e->class_groups) {
    m_status->setText(
        tr("No class groups. Add <b>,hierarchy=FILE</b> to the dataset: one line a class, "
           "<tt>CLASS_ID PARENT NAME</tt> or <tt>CLASS_ID TOP &gt; ... &gt; PARENT</tt> (e.g. "
           "WordNet's ancestors of ImageNet's classes)."));
    m_levelBox->hide();
    m_up->hide();
    m_level = m_baseLevel = 0;
    m_group = -1;
    showHeatmap();
    return;
  }
  const ClassHierarchy& h = *e->class_groups;
  const std::vector<RowCheck> checks = check_group_levels(*e);
  const RowCheck& classes = e->row_check;
  // "1 group", "2 groups"; "1 class wrong", "3 classes wrong".
  const auto groupsText = [](int n) { return n == 1 ? tr("1 group") : tr("%1 groups").arg(n); };
  const auto classesWrong = [](size_t n) {
    return n == 1 ? tr("1 class wrong") : tr("%1 classes wrong").arg(n);
  };
  QStringList wrongPerLevel;
  for (int l = 0; l < h.depth(); ++l) {
    const int size = h.levels[size_t(l)].size();
    const int wrong = int(checks[size_t(l)].wrong_rows.size());
    wrongPerLevel << QString::number(wrong);
    m_levelBox->addItem(h.depth() > 1 ? tr("Level %1 of %2: %3, %4 wrong")
                                            .arg(l + 1)
                                            .arg(h.depth())
                                            .arg(groupsText(size))
                                            .arg(wrong)
                                      : tr("%1, %2 wrong").arg(groupsText(size)).arg(wrong));
  }
  m_levelBox->setVisible(h.depth() > 1);
  m_status->setText(
      h.depth() > 1
          ? tr("%1 levels of groups over %2 classes: %3 groups wrong (top level first), %4")
                .arg(h.depth())
                .arg(h.classes())
                .arg(wrongPerLevel.join(QStringLiteral(" / ")))
                .arg(classesWrong(classes.wrong_rows.size()))
          : tr("%1 of %2 classes: %3 wrong, %4")
                .arg(groupsText(h.levels[0].size()))
                .arg(h.classes())
                .arg(groupsText(int(checks.front().wrong_rows.size())))
                .arg(classesWrong(classes.wrong_rows.size())));

  // The tree as the file nests it, worst first among siblings (every node's own level ranks it).
  std::vector<std::vector<int32_t>> rank;
  for (const RowCheck& c : checks) rank.push_back(worstFirstRank(c));
  const std::vector<int32_t> classRank = worstFirstRank(classes);
  std::vector<int32_t> groupOfNode(h.nodes.size());
  std::vector<std::vector<int32_t>> childNodes(h.nodes.size() + 1), ownClasses(h.nodes.size());
  // Each node's index on its own level, in one pass (a search per node would be quadratic in
  // a file of a million groups).
  for (int32_t l = 0; l < h.depth(); ++l) {
    const ClassGroups& level = h.levels[size_t(l)];
    for (int32_t g = 0; g < level.size(); ++g)
      if (h.nodes[size_t(level.node[size_t(g)])].depth == l)
        groupOfNode[size_t(level.node[size_t(g)])] = g;
  }
  for (size_t n = 0; n < h.nodes.size(); ++n)
    childNodes[size_t(h.nodes[n].parent + 1)].push_back(int32_t(n));
  for (int32_t c = 0; c < h.classes(); ++c) ownClasses[size_t(h.parent_of[size_t(c)])].push_back(c);
  const auto byRank = [&](std::vector<int32_t>& nodes) {
    std::sort(nodes.begin(), nodes.end(), [&](int32_t a, int32_t b) {
      const std::vector<int32_t>& r = rank[size_t(h.nodes[size_t(a)].depth)];
      return r[size_t(groupOfNode[size_t(a)])] < r[size_t(groupOfNode[size_t(b)])];
    });
  };
  const auto addNode = [&](const auto& self, int32_t n) -> QTreeWidgetItem* {
    const int level = h.nodes[size_t(n)].depth;
    QTreeWidgetItem* item = checkedItem(shownText(h.nodes[size_t(n)].name), checks[size_t(level)],
                                        groupOfNode[size_t(n)], level, groupOfNode[size_t(n)]);
    std::vector<int32_t>& children = childNodes[size_t(n + 1)];
    byRank(children);
    for (int32_t child : children) item->addChild(self(self, child));
    std::vector<int32_t>& own = ownClasses[size_t(n)];
    std::sort(own.begin(), own.end(),
              [&](int32_t a, int32_t b) { return classRank[size_t(a)] < classRank[size_t(b)]; });
    for (int32_t c : own)
      if (size_t(c) < classes.observed.size())
        item->addChild(checkedItem(shownText(e->class_name(c)), classes, c, -1, c));
    return item;
  };
  byRank(childNodes[0]);
  QList<QTreeWidgetItem*> top;
  for (int32_t n : childNodes[0]) top << addNode(addNode, n);
  m_tree->addTopLevelItems(top);
  m_baseLevel = std::min(m_baseLevel, h.depth() - 1);
  m_levelBox->setCurrentIndex(m_baseLevel);
  m_level = m_baseLevel;
  m_group = -1;
  showHeatmap();
}

void GroupsPanel::showLevel(int level) {
  if (m_stale) fill();
  const Evaluation* e = m_result ? &m_result->eval : nullptr;
  if (!e || !e->class_groups || level < 0 || level >= e->class_groups->depth()) return;
  m_baseLevel = level;
  m_levelBox->setCurrentIndex(level);
  drillInto(level, -1);
}

void GroupsPanel::drillInto(int level, int group) {
  if (m_stale) fill();
  const Evaluation* e = m_result ? &m_result->eval : nullptr;
  if (!e || !e->class_groups || level < 0 || level >= e->class_groups->depth() ||
      group >= e->class_groups->levels[size_t(level)].size())
    return;
  // A drill from a level above the one chosen moves the choice up with it.
  if (level < m_baseLevel) {
    m_baseLevel = level;
    m_levelBox->setCurrentIndex(level);
  }
  m_level = level;
  m_group = group;
  if (group >= 0) {
    // Open the group's branch of the tree, and only it.
    m_tree->collapseAll();
    for (QTreeWidgetItemIterator it(m_tree); *it; ++it) {
      QTreeWidgetItem* item = *it;
      if (item->data(0, kLevelRole).toInt() != level || item->data(0, kIndexRole).toInt() != group)
        continue;
      for (QTreeWidgetItem* p = item; p; p = p->parent()) p->setExpanded(true);
      m_tree->setCurrentItem(item);
      m_tree->scrollToItem(item);
      break;
    }
  }
  showHeatmap();
}

void GroupsPanel::up() {
  const Evaluation* e = m_result ? &m_result->eval : nullptr;
  if (!e || !e->class_groups || m_group < 0) return;
  const ClassHierarchy& h = *e->class_groups;
  if (m_level <= m_baseLevel) return drillInto(m_level, -1);
  // Every class of the group lies in one group above: its first class's.
  const std::vector<int32_t> members = h.levels[size_t(m_level)].members(m_group);
  drillInto(m_level - 1, h.levels[size_t(m_level - 1)].group_of[size_t(members.front())]);
}

QString GroupsPanel::heatmapTooltip(int row, int col) const {
  const render::HeatmapData& d = m_heatmap->data();
  if (row < 0 || row >= d.classes || col >= d.classes) return {};
  const QString name = d.names[size_t(row)];
  if (col >= 0)
    return tr("True %1, predicted %2: %3")
        .arg(name, d.names[size_t(col)], count(d.value(row, col)));
  if (size_t(row) >= d.rowExpected.size()) return {};
  const double observed = d.rowObserved[size_t(row)], expected = d.rowExpected[size_t(row)];
  return tr("%1: row sum %2, true count %3 (%4)")
      .arg(name, count(observed), count(expected), difference(observed - expected));
}

void GroupsPanel::treeClicked(QTreeWidgetItem* item) {
  // A class: what its parent holds.
  if (item->data(0, kLevelRole).toInt() < 0 && item->parent()) item = item->parent();
  const int level = item->data(0, kLevelRole).toInt();
  if (level >= 0) drillInto(level, item->data(0, kIndexRole).toInt());
}

void GroupsPanel::showHeatmap() {
  const Evaluation* e = m_result ? &m_result->eval : nullptr;
  if (!e || !e->class_groups) {
    m_heatmap->setData(render::HeatmapData{});
    m_heatmapScroll->hide();
    return;
  }
  const ClassHierarchy& h = *e->class_groups;
  m_heatmapScroll->show();
  m_up->setVisible(m_group >= 0);
  if (m_group >= 0) {
    if (m_level > m_baseLevel) {
      const std::vector<int32_t> members = h.levels[size_t(m_level)].members(m_group);
      const ClassGroups& above = h.levels[size_t(m_level - 1)];
      m_up->setText(
          tr("Up to %1")
              .arg(shownText(above.groups[size_t(above.group_of[size_t(members.front())])])));
    } else {
      m_up->setText(h.depth() > 1 ? tr("Up to level %1").arg(m_level + 1) : tr("All groups"));
    }
  }
  m_heatmap->setData(m_group >= 0 ? render::groupChildrenHeatmap(*e, m_level, m_group)
                                  : render::groupsHeatmap(*e, m_level));
  m_heatmap->resetZoom();
}

}  // namespace shardlens::ui

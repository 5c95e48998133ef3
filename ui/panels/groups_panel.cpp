#include "ui/panels/groups_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "core/report/class_groups.h"
#include "core/report/report.h"
#include "ui/render/group_heatmaps.h"
#include "ui/render/shown_text.h"
#include "ui/views/heatmap_view.h"

namespace shardlens::ui {

namespace {

constexpr int kGroupRole = Qt::UserRole;  // a top-level item's group index

QString count(double v) {
  return QString::fromStdString(count_text(v));
}

QString difference(double off) {
  return off == 0 ? QStringLiteral("0") : (off > 0 ? QStringLiteral("+") : QString()) + count(off);
}

// One row of the tree: name, row sum, true count, difference; wrong rows say so in the
// first column too (greyscale) and are coloured.
QTreeWidgetItem* checkedItem(const QString& name, double observed, int64_t truth, double off,
                             bool wrong) {
  auto* item = new QTreeWidgetItem({(wrong ? QStringLiteral("⚠ ") : QString()) + name,
                                    count(observed), count(double(truth)), difference(off)});
  for (int c = 1; c < 4; ++c) item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  if (wrong)
    for (int c = 0; c < 4; ++c) item->setForeground(c, QColor(0xc0, 0x20, 0x20));
  return item;
}

}  // namespace

GroupsPanel::GroupsPanel(QWidget* parent)
    : QWidget(parent),
      m_status(new QLabel(this)),
      m_back(new QPushButton(tr("All groups"), this)),
      m_tree(new QTreeWidget(this)),
      m_heatmap(new HeatmapView(this)) {
  setObjectName(QStringLiteral("groupsPanel"));
  m_status->setWordWrap(true);
  m_back->setObjectName(QStringLiteral("allGroups"));
  m_back->setToolTip(tr("Back from a group's classes to the matrix of all groups"));
  m_tree->setObjectName(QStringLiteral("groupTree"));
  m_tree->setHeaderLabels({tr("Group / class"), tr("Row sum"), tr("Expected"), tr("Difference")});
  m_tree->setToolTip(
      tr("Each group's row sums its classes' rows and is checked against the sum of their true "
         "counts; expand a group for its classes, each checked alone. Click a group: its "
         "classes in the heatmap"));
  m_heatmap->setObjectName(QStringLiteral("groupHeatmap"));
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(m_tree);
  split->addWidget(m_heatmap);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(m_status);
  layout->addWidget(m_back);
  layout->addWidget(split, 1);
  connect(m_back, &QPushButton::clicked, this, [this] { expandGroup(-1); });
  connect(m_tree, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item, int) {
    const QTreeWidgetItem* top = item->parent() ? item->parent() : item;
    expandGroup(top->data(0, kGroupRole).toInt());
  });
  // A row of the collapsed matrix expands its group; in a group's classes nothing changes.
  connect(m_heatmap, &HeatmapView::cellClicked, this, [this](int row, int) {
    if (m_expanded < 0) expandGroup(m_heatmap->data().classOf.at(size_t(row)));
  });
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
  m_expanded = -1;
  m_tree->clear();
  const Evaluation* e = result ? &result->eval : nullptr;
  if (!e || !e->class_groups) {
    m_status->setText(
        tr("No class groups. Add <b>,hierarchy=FILE</b> to the dataset: one line a class, "
           "<tt>CLASS_ID PARENT NAME</tt> (e.g. WordNet's parents of ImageNet's classes)."));
    m_back->hide();
    showHeatmap();
    return;
  }
  const ClassHierarchy& h = *e->class_groups;
  const RowCheck groups = check_group_rows(*e);
  const RowCheck& classes = e->row_check;
  m_status->setText(tr("%1 groups of %2 classes: %3 groups wrong, %4 classes wrong")
                        .arg(h.size())
                        .arg(h.group_of.size())
                        .arg(groups.wrong_rows.size())
                        .arg(classes.wrong_rows.size()));
  // Worst group first, as the row check orders rows.
  for (int32_t g : groups.by_error) {
    const size_t r = size_t(g);
    QTreeWidgetItem* top = checkedItem(shownText(h.groups[r]), groups.observed[r], groups.truth[r],
                                       groups.off[r], groups.wrong[r]);
    top->setData(0, kGroupRole, g);
    for (int32_t c : h.members(g)) {
      if (size_t(c) >= classes.observed.size()) continue;
      const size_t k = size_t(c);
      top->addChild(checkedItem(shownText(e->class_name(c)), classes.observed[k], classes.truth[k],
                                classes.off[k], classes.wrong[k]));
    }
    m_tree->addTopLevelItem(top);
  }
  for (int c = 0; c < 4; ++c) m_tree->resizeColumnToContents(c);
  showHeatmap();
}

void GroupsPanel::expandGroup(int group) {
  if (m_stale) fill();
  const Evaluation* e = m_result ? &m_result->eval : nullptr;
  if (!e || !e->class_groups || group >= e->class_groups->size()) return;
  m_expanded = group;
  for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
    QTreeWidgetItem* top = m_tree->topLevelItem(i);
    top->setExpanded(top->data(0, kGroupRole).toInt() == group);
  }
  showHeatmap();
}

void GroupsPanel::showHeatmap() {
  const Evaluation* e = m_result ? &m_result->eval : nullptr;
  if (!e || !e->class_groups) {
    m_heatmap->setData(render::HeatmapData{});
    m_heatmap->hide();
    return;
  }
  m_heatmap->show();
  m_back->setVisible(m_expanded >= 0);
  m_heatmap->setData(m_expanded >= 0 ? render::groupMembersHeatmap(*e, m_expanded)
                                     : render::groupsHeatmap(*e));
  m_heatmap->resetZoom();
}

}  // namespace shardlens::ui

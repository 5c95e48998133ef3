#pragma once
// "Groups" (a page of the Classes dock): a matrix of many classes read by the dataset's
// class hierarchy (",hierarchy=FILE"), level by level. A tree of the groups nested as the
// file nests them (a group expands to its subgroups, then to its classes), each with its row
// sum against the sum of its classes' true counts, marked when wrong, worst first on every
// level; below it the matrix collapsed to one level (the level selector). Clicking a group
// (in the tree, or a row or column of the heatmap) drills into it: the heatmap shows its
// groups on the level below, or its classes below the deepest level; "Up" goes back a level.
// Without a hierarchy it says how to give one.
#include <QWidget>

#include "ui/jobs/evaluation_runner.h"

class QComboBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QTreeWidget;
class QTreeWidgetItem;

namespace shardlens::ui {

class HeatmapView;

class GroupsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit GroupsPanel(QWidget* parent = nullptr);
  // Filled at once while the panel is visible, else when it is next shown (a dock tab not
  // raised costs nothing: at 1000 classes the ranking reads a million cells).
  void setResult(const ResultPtr& result);
  // The heatmap collapsed to level `level` (0 the top), every group of it.
  void showLevel(int level);
  // The heatmap of group `group` of level `level` drilled into (its groups a level down, or
  // its classes), the group expanded in the tree; group -1: every group of the level.
  void drillInto(int level, int group);
  // What the heatmap shows: a level and the group drilled into (-1: the level's groups).
  int shownLevel() const { return m_level; }
  int shownGroup() const { return m_group; }
  QComboBox* levelBox() const { return m_levelBox; }
  QTreeWidget* tree() const { return m_tree; }
  HeatmapView* heatmap() const { return m_heatmap; }

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void fill();
  void showHeatmap();
  void up();
  void treeClicked(QTreeWidgetItem* item);
  QString heatmapTooltip(int row, int col) const;

  ResultPtr m_result;
  bool m_stale = false;  // m_result is not what the tree and heatmap show yet
  int m_baseLevel = 0;   // the level chosen in the selector
  int m_level = 0;
  int m_group = -1;
  QLabel* m_status;
  QComboBox* m_levelBox;
  QPushButton* m_up;
  QTreeWidget* m_tree;
  HeatmapView* m_heatmap;
  QScrollArea* m_heatmapScroll = nullptr;
};

}  // namespace shardlens::ui

#pragma once
// "Groups" (a page of the Classes dock): a matrix of many classes read by the dataset's
// class hierarchy (",hierarchy=FILE"). A tree of the groups, each with its row sum against
// the sum of its classes' true counts (marked when wrong) and, expanded, its classes with
// their own rows checked; below it the matrix collapsed to the groups. Clicking a group (in
// the tree or a row of the collapsed matrix) expands it: the heatmap shows its classes,
// "All groups" goes back. Without a hierarchy it says how to give one.
#include <QWidget>

#include "ui/jobs/evaluation_runner.h"

class QLabel;
class QPushButton;
class QTreeWidget;

namespace shardlens::ui {

class HeatmapView;

class GroupsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit GroupsPanel(QWidget* parent = nullptr);
  // Filled at once while the panel is visible, else when it is next shown (a dock tab not
  // raised costs nothing: at 1000 classes the ranking reads a million cells).
  void setResult(const ResultPtr& result);
  // Shows group `group`'s classes in the heatmap (and expands it in the tree); -1: all groups.
  void expandGroup(int group);
  int expandedGroup() const { return m_expanded; }
  QTreeWidget* tree() const { return m_tree; }
  HeatmapView* heatmap() const { return m_heatmap; }

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void fill();
  void showHeatmap();

  ResultPtr m_result;
  bool m_stale = false;  // m_result is not what the tree and heatmap show yet
  int m_expanded = -1;
  QLabel* m_status;
  QPushButton* m_back;
  QTreeWidget* m_tree;
  HeatmapView* m_heatmap;
};

}  // namespace shardlens::ui

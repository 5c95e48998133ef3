#pragma once
// "Most confused" (a page of the Classes dock): a thousand classes read at a glance. Two
// tables: the most confused pairs of the reported matrix (true -> predicted, count, expected
// count, the ranks that counted it) and the wrong rows, worst first (row sum, true count,
// difference, the ranks holding its samples counted more than once, each rank's row sum),
// both from core/report/confusion_ranking.h. Clicking a pair shows its cell (its samples,
// and the synced view's cursor on it); clicking a row shows the row's diagonal cell.
#include <QWidget>

#include "ui/jobs/evaluation_runner.h"
#include "ui/models/cell_info.h"

class QLabel;
class QTableWidget;

namespace shardlens::ui {

class ConfusionPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ConfusionPanel(QWidget* parent = nullptr);
  // Lists the ranking the job made with the result (result->tables: at most
  // kConfusionsShown pairs and wrong rows). Filled at once while the panel is visible, else
  // when it is next shown (a dock tab not raised fills no table).
  void setResult(const ResultPtr& result);
  QTableWidget* pairsTable() const { return m_pairs; }
  QTableWidget* rowsTable() const { return m_rows; }

 signals:
  // A pair or a wrong row was chosen: its cell in the synced view (class ids).
  void cellActivated(const shardlens::ui::CellRef& cell);

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void fill();
  ResultPtr m_result;
  bool m_stale = false;  // m_result is not what the tables show yet
  QLabel* m_pairsTitle;
  QTableWidget* m_pairs;
  QLabel* m_rowsTitle;
  QTableWidget* m_rows;
};

}  // namespace shardlens::ui

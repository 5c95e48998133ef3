#pragma once
// Compare with…: a second evaluation (a run, one epoch of a run, or a scenario) beside the
// current one: both reported matrices on a shared colour range and their difference; equal
// matrices say so in one line, differing ones are listed cell by cell.
#include <QDialog>
#include <QString>
#include <memory>

#include "core/evaluation/evaluation.h"
#include "core/report/compare.h"

class QLabel;
class QPlainTextEdit;

namespace shardlens::ui {

class HeatmapView;

class CompareDialog : public QDialog {
  Q_OBJECT
 public:
  CompareDialog(std::shared_ptr<const Evaluation> current, const QString& currentName,
                std::shared_ptr<const Evaluation> other, const QString& otherName,
                QWidget* parent = nullptr);

  HeatmapView* currentView() const { return m_current; }
  HeatmapView* otherView() const { return m_other; }
  HeatmapView* differenceView() const { return m_difference; }
  const Comparison& comparison() const { return m_comparison; }
  QString summary() const;
  // Every cell that differs, one line each (true class, predicted class, A, B, B − A);
  // empty when the matrices are equal or not comparable.
  QString differingCells() const;

 private:
  std::shared_ptr<const Evaluation> m_a, m_b;
  Comparison m_comparison;
  HeatmapView* m_current;
  HeatmapView* m_other;
  HeatmapView* m_difference;
  QLabel* m_summary;
  QPlainTextEdit* m_cells;
};

}  // namespace shardlens::ui

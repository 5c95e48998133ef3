#pragma once
// The samples of one confusion-matrix cell, as a table: rank, position in the rank's
// sequence, dataset index, true and predicted class, what the sample adds to the cell (its
// pixels or tokens there, for a task whose samples count many cells), and whether it is a
// padding duplicate or a leaked sanity-check record.
#include <QAbstractTableModel>
#include <vector>

#include "core/report/cell_index.h"

namespace shardlens::ui {

class SampleModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Rank, Position, Index, Target, Prediction, Count, Flags, ColumnCount };
  explicit SampleModel(QObject* parent = nullptr);

  // `task` names the Count column ("Pixels", "Tokens"; 1 a sample for classification).
  void setSamples(std::vector<CellSample> samples, std::vector<QString> classNames,
                  Task task = Task::Classification);
  const CellSample* sample(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  QString className(int c) const;
  std::vector<CellSample> m_samples;
  std::vector<QString> m_names;
  Task m_task = Task::Classification;
};

}  // namespace shardlens::ui

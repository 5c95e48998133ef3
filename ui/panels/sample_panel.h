#pragma once
// The samples of the clicked cell: a table (rank, position, dataset index, classes, flags)
// and, for IDX datasets, the selected sample's 28x28 image.
#include <QLabel>
#include <QTableView>
#include <QWidget>

#include "ui/models/cell_info.h"
#include "ui/models/idx_images.h"
#include "ui/models/sample_model.h"

namespace shardlens::ui {

class SamplePanel : public QWidget {
  Q_OBJECT
 public:
  static constexpr size_t kListLimit = 10000;
  explicit SamplePanel(QWidget* parent = nullptr);
  void showCell(const ResultPtr& result, const CellRef& cell);
  void clear();
  SampleModel* model() { return m_model; }

 signals:
  void error(const QString& message);

 private:
  void showImage(const QModelIndex& index);

  ResultPtr m_result;
  SampleModel* m_model;
  QTableView* m_table;
  QLabel* m_title;
  QLabel* m_image;
  QLabel* m_imageCaption;
  QString m_imagesPath;
  std::vector<int64_t> m_sourceIndices;  // a subset's index in the full dataset, per sample
  IdxImageCache m_images;
};

}  // namespace shardlens::ui

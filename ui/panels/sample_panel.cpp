#include "ui/panels/sample_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QVBoxLayout>
#include <exception>

#include "core/torchsem/sampler.h"
#include "ui/render/heatmap_source.h"
#include "ui/render/task_words.h"

namespace shardlens::ui {

SamplePanel::SamplePanel(QWidget* parent) : QWidget(parent), m_model(new SampleModel(this)) {
  m_title = new QLabel(tr("Click a cell to list its samples."), this);
  m_title->setWordWrap(true);
  m_title->setTextFormat(Qt::RichText);
  m_table = new QTableView(this);
  m_table->setModel(m_model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setAlternatingRowColors(true);
  m_image = new QLabel(this);
  m_image->setFixedSize(112, 112);
  m_image->setAlignment(Qt::AlignCenter);
  m_image->setFrameShape(QFrame::StyledPanel);
  m_imageCaption = new QLabel(this);
  m_imageCaption->setWordWrap(true);
  // Image beside the caption, above the table: the dock is narrow and the table needs width.
  auto* imageRow = new QHBoxLayout;
  imageRow->addWidget(m_image);
  imageRow->addWidget(m_imageCaption, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_title);
  layout->addLayout(imageRow);
  layout->addWidget(m_table, 1);
  m_image->hide();
  m_imageCaption->hide();
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showImage(current); });
}

void SamplePanel::clear() {
  m_result.reset();
  m_model->setSamples({}, {});
  m_title->setText(tr("Click a cell to list its samples."));
  m_image->hide();
  m_imageCaption->hide();
}

void SamplePanel::showCell(const ResultPtr& result, const CellRef& cell) {
  m_result = result;
  if (!result) return clear();
  int64_t total = 0;
  auto samples = cellSamples(*result, cell, kListLimit, &total);
  const size_t shown = samples.size();
  const Evaluation& e = result->eval;
  m_model->setSamples(std::move(samples), render::classNames(e), e.meta.task);
  QString title = QStringLiteral("<b>%1</b><br>").arg(cellTitle(*result, cell));
  if (render::countsCells(e)) {
    // The cell counts pixels (tokens); the list is of the images (sequences) they came from.
    const QString samplesWord = render::samplesWord(e);
    title +=
        total > int64_t(shown)
            ? tr("%1 %2 (first %3 listed), %4 %5 in the cell")
                  .arg(total)
                  .arg(samplesWord)
                  .arg(shown)
                  .arg(render::formatValue(cellCount(*result, cell), false), render::countsWord(e))
            : tr("%1 %2, %3 %4 in the cell")
                  .arg(total)
                  .arg(total == 1 ? render::sampleWord(e.meta.task) : samplesWord)
                  .arg(render::formatValue(cellCount(*result, cell), false), render::countsWord(e));
  } else {
    title += total > int64_t(shown) ? tr("%1 samples (first %2 listed)").arg(total).arg(shown)
                                    : tr("%n sample(s)", nullptr, int(total));
  }
  m_title->setText(title);
  // Every image of a cell shares its true and predicted class (the title names them): the
  // narrow dock shows each one's pixels in their place.
  const bool cells = render::countsCells(e);
  m_table->setColumnHidden(SampleModel::Count, !render::countsPerSample(e));
  m_table->setColumnHidden(SampleModel::Target, cells);
  m_table->setColumnHidden(SampleModel::Prediction, cells);
  m_table->resizeColumnsToContents();
  m_imagesPath = idxImagesPath(result->eval.meta.dataset);
  // A subset's samples keep their image in the full dataset.
  m_sourceIndices =
      result->eval.labels ? result->eval.labels->source_indices : std::vector<int64_t>{};
  m_image->setVisible(!m_imagesPath.isEmpty());
  m_imageCaption->setVisible(!m_imagesPath.isEmpty());
  m_image->clear();
  m_imageCaption->clear();
  if (m_model->rowCount() > 0) m_table->selectRow(0);
}

void SamplePanel::showImage(const QModelIndex& index) {
  const CellSample* s = m_model->sample(index.row());
  if (!s || m_imagesPath.isEmpty()) return;
  try {
    const int64_t source = s->index >= 0 && size_t(s->index) < m_sourceIndices.size()
                               ? m_sourceIndices[size_t(s->index)]
                               : s->index;
    const QImage img = m_images.image(m_imagesPath, source);
    m_image->setPixmap(
        QPixmap::fromImage(img.scaled(112, 112, Qt::KeepAspectRatio, Qt::FastTransformation)));
    const QString where = source == s->index
                              ? QString::number(s->index)
                              : tr("%1 (%2 in the full dataset)").arg(s->index).arg(source);
    m_imageCaption->setText(tr("Dataset index %1\nrank %2, position %3%4")
                                .arg(where)
                                .arg(s->rank)
                                .arg(s->position)
                                .arg(s->flags & kPadding ? tr("\npadding duplicate") : QString()));
  } catch (const std::exception& e) {
    m_imagesPath.clear();
    m_image->hide();
    m_imageCaption->hide();
    emit error(QString::fromStdString(e.what()));
  }
}

}  // namespace shardlens::ui

#include "ui/models/sample_model.h"

#include "core/torchsem/sampler.h"
#include "ui/render/task_words.h"

namespace shardlens::ui {

SampleModel::SampleModel(QObject* parent) : QAbstractTableModel(parent) {}

void SampleModel::setSamples(std::vector<CellSample> samples, std::vector<QString> classNames,
                             Task task) {
  beginResetModel();
  m_task = task;
  m_samples = std::move(samples);
  m_names = std::move(classNames);
  endResetModel();
}

const CellSample* SampleModel::sample(int row) const {
  return row >= 0 && row < int(m_samples.size()) ? &m_samples[size_t(row)] : nullptr;
}

int SampleModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_samples.size());
}

int SampleModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString SampleModel::className(int c) const {
  return c >= 0 && c < int(m_names.size())
             ? QStringLiteral("%1 (%2)").arg(c).arg(m_names[size_t(c)])
             : QString::number(c);
}

QVariant SampleModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const CellSample& s = m_samples[size_t(index.row())];
  if (role == Qt::TextAlignmentRole)
    return index.column() == Flags || index.column() == Target || index.column() == Prediction
               ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
               : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
  switch (index.column()) {
    case Rank:
      return s.rank < 0 ? QVariant(QStringLiteral("dataset")) : QVariant(s.rank);
    case Position:
      return QVariant::fromValue<qlonglong>(s.position);
    case Index:
      return QVariant::fromValue<qlonglong>(s.index);
    case Target:
      return role == Qt::UserRole ? QVariant(s.target) : QVariant(className(s.target));
    case Prediction:
      return role == Qt::UserRole ? QVariant(s.prediction) : QVariant(className(s.prediction));
    case Count:
      return QVariant::fromValue<qlonglong>(s.count);
    case Flags: {
      QStringList f;
      if (s.flags & kPadding) f << tr("padding duplicate");
      if (s.flags & kSanity) f << tr("sanity check");
      return f.join(QStringLiteral(", "));
    }
  }
  return {};
}

QVariant SampleModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Rank:
      return tr("Rank");
    case Position:
      return tr("Position");
    case Index:
      return m_task == Task::Classification
                 ? tr("Dataset index")
                 : tr("%1 (dataset index)").arg(render::capitalized(render::sampleWord(m_task)));
    case Target:
      return tr("True");
    case Prediction:
      return tr("Predicted");
    case Count:
      return render::capitalized(render::countsWord(m_task));
    case Flags:
      return tr("Flags");
  }
  return {};
}

}  // namespace shardlens::ui

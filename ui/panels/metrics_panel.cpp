#include "ui/panels/metrics_panel.h"

#include <QBrush>
#include <QColor>
#include <QHeaderView>
#include <cmath>

namespace shardlens::ui {

namespace {

QString value(const std::optional<double>& v, bool signedValue = false) {
  if (!v) return QStringLiteral("–");
  const QString text = QString::number(*v, 'f', 4);
  return signedValue && *v > 0 ? QStringLiteral("+") + text : text;
}

}  // namespace

MetricsModel::MetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetricsModel::setEvaluation(const Evaluation* e) {
  beginResetModel();
  m_rows = e ? metric_rows(*e) : std::vector<MetricRow>{};
  endResetModel();
}

int MetricsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_rows.size());
}

int MetricsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(m_rows.size())) return {};
  const MetricRow& r = m_rows[size_t(index.row())];
  const bool changed = r.difference && std::abs(*r.difference) > 1e-12;
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Metric:
        return QString::fromStdString(r.name);
      case Reported:
        return value(r.reported);
      case Expected:
        return value(r.expected);
      case Difference:
        return value(r.difference, true);
      default:
        return {};
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() != Metric)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  // Colour and text both mark a change (the sign is in the text for colour-blind readers).
  if (role == Qt::ForegroundRole && index.column() == Difference && changed)
    return QBrush(*r.difference < 0 ? QColor(0xb2, 0x18, 0x2b) : QColor(0x21, 0x66, 0xac));
  if (role == Qt::ToolTipRole) {
    if (!r.reported) return tr("Nothing was reported: the metric cannot be computed");
    return changed ? tr("%1 changed by %2 against a single process on the whole dataset")
                         .arg(QString::fromStdString(r.name), value(r.difference, true))
                   : tr("Unchanged");
  }
  return {};
}

QVariant MetricsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Metric:
      return tr("Metric");
    case Reported:
      return tr("Reported");
    case Expected:
      return tr("Expected");
    case Difference:
      return tr("Difference");
    default:
      return {};
  }
}

MetricsPanel::MetricsPanel(QWidget* parent) : QTableView(parent), m_model(new MetricsModel(this)) {
  setModel(m_model);
  setObjectName(QStringLiteral("metrics"));
  setAlternatingRowColors(true);
  setWordWrap(false);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  verticalHeader()->hide();
  horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  horizontalHeader()->setSectionResizeMode(MetricsModel::Metric, QHeaderView::ResizeToContents);
  setToolTip(
      tr("Accuracy, macro and weighted F1 and per-class precision, recall and F1 "
         "(torchmetrics conventions, zero division as 0) of the reported and the "
         "expected matrix, the largest change first"));
}

void MetricsPanel::setResult(const ResultPtr& result) {
  m_result = result;
  m_model->setEvaluation(result ? &result->eval : nullptr);
}

}  // namespace shardlens::ui

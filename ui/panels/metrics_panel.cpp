#include "ui/panels/metrics_panel.h"

#include <QBrush>
#include <QColor>
#include <QEvent>
#include <QHeaderView>
#include <QPainter>
#include <QScrollBar>
#include <algorithm>
#include <cmath>

namespace shardlens::ui {

namespace {

QString value(std::optional<double> v, bool signedValue = false) {
  if (!v || std::isnan(*v)) return QStringLiteral("–");
  if (*v == 0) v = 0.0;  // a negative zero reads "0.0000", not "-0.0000"
  // A change below the fourth decimal (one duplicated sentence among 3,453) still shows as
  // one, not as "-0.0000".
  const bool tiny = signedValue && *v != 0 && std::abs(*v) < 5e-5;
  const QString text = QString::number(*v, tiny ? 'e' : 'f', tiny ? 1 : 4);
  return signedValue && *v > 0 ? QStringLiteral("+") + text : text;
}

}  // namespace

MetricsModel::MetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetricsModel::setTable(const MetricsTable* table) {
  beginResetModel();
  m_task = table ? table->task : Task::Classification;
  m_rows = table ? table->rows : std::vector<MetricRow>{};
  m_perRankMean = table ? table->perRankMean : std::vector<std::optional<double>>{};
  endResetModel();
}

void MetricsModel::setEvaluation(const Evaluation* e) {
  if (!e) return setTable(nullptr);
  const MetricsTable table = metricsTable(*e);
  setTable(&table);
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
      case PerRankMean:
        return size_t(index.row()) < m_perRankMean.size()
                   ? value(m_perRankMean[size_t(index.row())])
                   : QStringLiteral("–");
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
    if (index.column() == PerRankMean)
      return tr("Each rank's own %1 averaged over the ranks: what self.log(name, value, "
                "sync_dist=True) logs of a per-rank value, not the metric")
          .arg(QString::fromStdString(r.name));
    if (!r.reported) return tr("Nothing was reported: the metric cannot be computed");
    // The name column may be narrower than a long name: its tooltip names it whole.
    if (index.column() == Metric && !changed)
      return tr("%1: unchanged").arg(QString::fromStdString(r.name));
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
      return taskMetrics() ? tr("True") : tr("Expected");
    case Difference:
      return tr("Difference");
    case PerRankMean:
      return tr("Per-rank\nmean");  // two lines: the column no wider than its numbers
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
  // Numbers and their headers are never cut: each value column as wide as its widest value
  // and its header ("Difference", "+0.1124"); the metric's name takes what is left (whole in a
  // tooltip), and a dock narrower than the numbers scrolls sideways rather than eliding them.
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setSectionResizeMode(MetricsModel::Metric, QHeaderView::Stretch);
  horizontalHeader()->setMinimumSectionSize(
      fontMetrics().horizontalAdvance(QStringLiteral("recall 0")) + 12);
  setTextElideMode(Qt::ElideRight);
  setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  m_classificationTip =
      tr("Accuracy, macro and weighted F1 and per-class precision, recall and F1 "
         "(torchmetrics conventions, zero division as 0) of the reported and the "
         "expected matrix, the largest change first");
  setToolTip(m_classificationTip);
  setColumnHidden(MetricsModel::PerRankMean, true);
  m_lineRowHeight = verticalHeader()->defaultSectionSize();
  // Rows filled by setResult or straight into the model (tests): their names measured.
  connect(m_model, &QAbstractItemModel::modelReset, this, &MetricsPanel::measureNames);
  connect(horizontalHeader(), &QHeaderView::sectionResized, this,
          [this](int column, int, int width) {
            if (column == MetricsModel::Metric) fitNames(width);
          });
}

void MetricsPanel::resizeEvent(QResizeEvent* event) {
  QTableView::resizeEvent(event);
  fitNames(columnWidth(MetricsModel::Metric));
}

void MetricsPanel::fitNames(int nameWidth) {
  const int room = nameWidth - 6;  // the item's text margins
  const bool wrap = m_widestName.oneLine > room;
  if (wrap == wordWrap()) return;
  setWordWrap(wrap);
  const QFontMetrics fm(font());
  verticalHeader()->setDefaultSectionSize(wrap ? std::max(m_lineRowHeight, 2 * fm.lineSpacing() + 6)
                                               : m_lineRowHeight);
}

MetricsPanel::NameWidths MetricsPanel::nameWidths(const QString& name) const {
  if (const auto known = m_nameWidths.constFind(name); known != m_nameWidths.cend()) return *known;
  const QFontMetrics fm(font());
  const auto isNumber = [](const QString& word) {
    bool ok = false;
    word.toLongLong(&ok);
    return ok;
  };
  const QStringList words = name.split(QLatin1Char(' '));
  NameWidths w;
  w.oneLine = fm.horizontalAdvance(name);
  w.twoLines = w.oneLine;
  for (qsizetype k = 1; k < words.size(); ++k)
    if (!isNumber(words[k]))
      w.twoLines = std::min(w.twoLines,
                            std::max(fm.horizontalAdvance(words.first(k).join(QLatin1Char(' '))),
                                     fm.horizontalAdvance(words.sliced(k).join(QLatin1Char(' ')))));
  m_nameWidths.insert(name, w);
  return w;
}

void MetricsPanel::measureNames() {
  m_widestName = {};
  for (int r = 0; r < m_model->rowCount(); ++r) {
    const NameWidths w = nameWidths(m_model->index(r, MetricsModel::Metric).data().toString());
    m_widestName.oneLine = std::max(m_widestName.oneLine, w.oneLine);
    m_widestName.twoLines = std::max(m_widestName.twoLines, w.twoLines);
  }
}

void MetricsPanel::setResult(const ResultPtr& result) {
  m_result = result;
  // The job computed the rows (result->tables); a result made without the runner gets them now.
  const ResultTablesPtr tables = result ? tablesFor(*result) : nullptr;
  m_model->setTable(tables ? &tables->metrics : nullptr);
  const bool task = m_model->taskMetrics();
  setColumnHidden(MetricsModel::PerRankMean, !task);
  if (task)
    setToolTip(tr("The task's metrics over %1 (torchmetrics conventions: mIoU the mean over the "
                  "classes present, ignore_index left out, zero division as 0) of the reported "
                  "matrix, the true one (one process on the whole dataset) and each rank's own "
                  "averaged, then the classes that moved most")
                   .arg(QString::fromStdString(count_unit(result->eval.meta.task))));
  else
    setToolTip(m_classificationTip);
  // The metrics compare the reported matrix with the expected one: without it, say so rather
  // than show an empty table.
  fitNames(columnWidth(MetricsModel::Metric));
  m_emptyText.clear();
  if (result && !task && m_model->rowCount() == 0 && !result->eval.expected)
    m_emptyText = tr("No metrics: they compare the reported matrix with the expected one, and "
                     "the expected matrix is unknown (%1).")
                      .arg(QString::fromStdString(result->eval.expected_missing));
  viewport()->update();
}

int MetricsPanel::readableWidth() const {
  // A scroll bar's width always: with more rows than fit, one appears beside the numbers.
  int width = 2 * frameWidth() + verticalScrollBar()->sizeHint().width();
  for (int c = 0; c < MetricsModel::ColumnCount; ++c)
    if (!isColumnHidden(c) && c != MetricsModel::Metric)
      width += std::max(sizeHintForColumn(c), horizontalHeader()->sectionSizeHint(c));
  // The names at most two lines (fitNames wraps them), each word whole, a class number on
  // the line of its measure ("precision 770" is not broken).
  const int names = std::max(horizontalHeader()->sectionSizeHint(MetricsModel::Metric),
                             m_widestName.twoLines + 6 + 2);  // the text margins, rounding
  return width + names + 1;                                   // and the name column's grid line
}

void MetricsPanel::changeEvent(QEvent* event) {
  QTableView::changeEvent(event);
  if (event->type() != QEvent::FontChange) return;
  m_nameWidths.clear();  // measured in the old font
  measureNames();
  fitNames(columnWidth(MetricsModel::Metric));
}

void MetricsPanel::paintEvent(QPaintEvent* event) {
  QTableView::paintEvent(event);
  if (m_emptyText.isEmpty() || m_model->rowCount() > 0) return;
  QPainter p(viewport());
  p.setPen(palette().color(QPalette::PlaceholderText));
  p.drawText(viewport()->rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
             m_emptyText);
}

}  // namespace shardlens::ui

#include "ui/panels/confusion_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/report/confusion_ranking.h"
#include "core/report/report.h"
#include "ui/render/shown_text.h"

namespace shardlens::ui {

namespace {

// Roles of a table's first item: the cell a click shows.
constexpr int kTrueRole = Qt::UserRole;
constexpr int kPredRole = Qt::UserRole + 1;

QTableWidget* table(QWidget* parent, const char* name, const QStringList& headers) {
  auto* t = new QTableWidget(0, int(headers.size()), parent);
  t->setObjectName(QLatin1String(name));
  t->setHorizontalHeaderLabels(headers);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setStretchLastSection(true);
  t->setWordWrap(false);
  return t;
}

QString count(double v) {
  return QString::fromStdString(count_text(v));
}

QString ranksText(const std::vector<RankCount>& ranks) {
  QStringList parts;
  for (const RankCount& r : ranks)
    parts << QStringLiteral("r%1: %2").arg(r.rank).arg(count(r.count));
  return parts.isEmpty() ? QObject::tr("none") : parts.join(QStringLiteral(", "));
}

QTableWidgetItem* item(const QString& text, bool number = false) {
  auto* i = new QTableWidgetItem(text);
  if (number) i->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  i->setToolTip(text);
  return i;
}

}  // namespace

ConfusionPanel::ConfusionPanel(QWidget* parent)
    : QWidget(parent),
      m_pairsTitle(new QLabel(this)),
      m_pairs(table(this, "confusedPairs",
                    {tr("True"), tr("Predicted"), tr("Count"), tr("Expected"), tr("Ranks")})),
      m_rowsTitle(new QLabel(this)),
      m_rows(table(this, "wrongRows",
                   {tr("Class"), tr("Row sum"), tr("Expected"), tr("Difference"), tr("Repeated"),
                    tr("Ranks")})) {
  setObjectName(QStringLiteral("confusionPanel"));
  m_pairs->setToolTip(
      tr("Off-diagonal cells of the reported matrix, largest first (fastai's most_confused), "
         "with each rank's count of the cell. Click: the cell's samples"));
  m_rows->setToolTip(
      tr("Rows whose sum misses their class's true count, the largest difference first, with "
         "Repeated: the ranks holding its samples counted more than once (padding, overlapping "
         "shards), each with how many; Ranks: each rank's row sum. Click: the row's samples"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(m_pairsTitle);
  layout->addWidget(m_pairs, 1);
  layout->addWidget(m_rowsTitle);
  layout->addWidget(m_rows, 1);
  const auto activate = [this](QTableWidget* t, int row) {
    const QTableWidgetItem* first = t->item(row, 0);
    if (!first) return;
    CellRef cell;
    cell.kind = ViewKind::Synced;
    cell.trueClass = first->data(kTrueRole).toInt();
    cell.predClass = first->data(kPredRole).toInt();
    emit cellActivated(cell);
  };
  connect(m_pairs, &QTableWidget::cellClicked, this,
          [this, activate](int row, int) { activate(m_pairs, row); });
  connect(m_rows, &QTableWidget::cellClicked, this,
          [this, activate](int row, int) { activate(m_rows, row); });
  setResult(nullptr);
}

void ConfusionPanel::setResult(const ResultPtr& result) {
  m_result = result;
  m_stale = true;
  if (isVisible() || !result) fill();
}

void ConfusionPanel::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (m_stale) fill();
}

void ConfusionPanel::fill() {
  m_stale = false;
  const ResultPtr& result = m_result;
  m_pairs->setRowCount(0);
  m_rows->setRowCount(0);
  if (!result) {
    m_pairsTitle->setText(tr("Most confused pairs"));
    m_rowsTitle->setText(tr("Wrong rows, worst first"));
    return;
  }
  const Evaluation& e = result->eval;
  // The job ranked them (result->tables); a result made without the runner is ranked now.
  const ResultTablesPtr tables = tablesFor(*result);
  const ConfusionRanking& ranking = tables->confusion;
  const auto name = [&](int32_t c) {
    return c < e.classes() ? shownText(e.class_name(c)) : QString::number(c);
  };
  m_pairsTitle->setText(ranking.confused_cells > ranking.pairs.size()
                            ? tr("Most confused pairs: %1 of %2 confused cells")
                                  .arg(ranking.pairs.size())
                                  .arg(ranking.confused_cells)
                            : tr("Most confused pairs: %1").arg(ranking.pairs.size()));
  m_pairs->setRowCount(int(ranking.pairs.size()));
  for (int i = 0; i < int(ranking.pairs.size()); ++i) {
    const ConfusedPair& p = ranking.pairs[size_t(i)];
    QTableWidgetItem* first = item(name(p.true_class));
    first->setData(kTrueRole, p.true_class);
    first->setData(kPredRole, p.predicted);
    m_pairs->setItem(i, 0, first);
    m_pairs->setItem(i, 1, item(name(p.predicted)));
    m_pairs->setItem(i, 2, item(count(p.count), true));
    m_pairs->setItem(i, 3, item(p.expected ? count(*p.expected) : QStringLiteral("–"), true));
    m_pairs->setItem(i, 4, item(ranksText(p.ranks)));
  }
  m_rowsTitle->setText(ranking.wrong_total == 0
                           ? tr("Wrong rows: none (every row sums to its true count)")
                       : ranking.wrong_total > ranking.wrong_rows.size()
                           ? tr("Wrong rows, worst first: %1 of %2")
                                 .arg(ranking.wrong_rows.size())
                                 .arg(ranking.wrong_total)
                           : tr("Wrong rows, worst first: %1").arg(ranking.wrong_total));
  m_rows->setRowCount(int(ranking.wrong_rows.size()));
  for (int i = 0; i < int(ranking.wrong_rows.size()); ++i) {
    const WrongRow& w = ranking.wrong_rows[size_t(i)];
    QTableWidgetItem* first = item(name(w.row));
    first->setData(kTrueRole, w.row);
    first->setData(kPredRole, w.row);
    m_rows->setItem(i, 0, first);
    m_rows->setItem(i, 1, item(count(w.observed), true));
    m_rows->setItem(i, 2, item(count(double(w.truth)), true));
    m_rows->setItem(i, 3, item((w.off > 0 ? QStringLiteral("+") : QString()) + count(w.off), true));
    m_rows->setItem(i, 4, item(w.repeated.empty() ? QStringLiteral("–") : ranksText(w.repeated)));
    m_rows->setItem(i, 5, item(ranksText(w.ranks)));
  }
  for (QTableWidget* t : {m_pairs, m_rows}) t->resizeColumnsToContents();
}

}  // namespace shardlens::ui

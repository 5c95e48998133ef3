#include "ui/dialogs/compare_dialog.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>
#include <algorithm>
#include <numeric>

#include "ui/render/heatmap_source.h"
#include "ui/views/heatmap_view.h"

namespace shardlens::ui {
namespace {

std::vector<int> identity(int classes) {
  std::vector<int> order(static_cast<size_t>(classes));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

// The reported matrix of one side, with its true row counts and the evaluation's row check
// (both in class order, the order shown here), or why there is none.
render::HeatmapData reported(const Evaluation& e, const QString& name) {
  if (!e.synced) return render::emptyHeatmap(name, render::syncedMissingText(e));
  render::HeatmapData d =
      render::makeHeatmap(name, *e.synced, *e.synced, identity(e.classes()), render::classNames(e));
  render::describeValues(d, e, Normalization::None, false);
  d.rowExpected = render::trueRowCounts(e);
  d.rowWrong = e.row_check.wrong;
  return d;
}

// The rows whose sums differ between the two sides, as the comparison found them.
std::vector<bool> rowsDiffering(const Comparison& c, int classes) {
  std::vector<bool> differ(size_t(classes), false);
  for (int32_t r : c.rows)
    if (r >= 0 && r < classes) differ[size_t(r)] = true;
  return differ;
}

}  // namespace

CompareDialog::CompareDialog(std::shared_ptr<const Evaluation> current, const QString& currentName,
                             std::shared_ptr<const Evaluation> other, const QString& otherName,
                             QWidget* parent)
    : QDialog(parent),
      m_a(std::move(current)),
      m_b(std::move(other)),
      m_comparison(compare_evaluations(*m_a, *m_b)),
      m_current(new HeatmapView(this)),
      m_other(new HeatmapView(this)),
      m_difference(new HeatmapView(this)),
      m_summary(new QLabel(this)),
      m_cells(new QPlainTextEdit(this)) {
  setWindowTitle(tr("Compare: %1 and %2").arg(currentName, otherName));
  m_current->setObjectName(QStringLiteral("compareCurrent"));
  m_other->setObjectName(QStringLiteral("compareOther"));
  m_difference->setObjectName(QStringLiteral("compareDifference"));
  auto a = reported(*m_a, tr("A: %1").arg(currentName));
  auto b = reported(*m_b, tr("B: %1").arg(otherName));
  // One colour range for both, so equal colours mean equal counts; their bars say so.
  a.valueMax = b.valueMax = std::max(a.valueMax, b.valueMax);
  render::noteColourRange(a, render::ColourRange::Shared);
  render::noteColourRange(b, render::ColourRange::Shared);
  m_current->setData(std::move(a));
  m_other->setData(std::move(b));
  if (m_comparison.comparable && m_comparison.difference.classes > 0) {
    auto d = render::makeHeatmap(tr("B − A"), m_comparison.difference, m_comparison.difference,
                                 identity(m_a->classes()), render::classNames(*m_a));
    d.diverging = true;
    render::describeValues(d, *m_a, Normalization::None, true);
    d.rowExpected.assign(size_t(d.classes), 0.0);  // equal rows differ by zero
    d.rowWrong = rowsDiffering(m_comparison, d.classes);
    render::noteColourRange(d, render::ColourRange::Own);
    m_difference->setData(std::move(d));
  } else {
    m_difference->setData(
        render::emptyHeatmap(tr("B − A"), QString::fromStdString(m_comparison.why)));
  }
  m_summary->setTextFormat(Qt::PlainText);  // why two runs differ may quote their files
  m_summary->setText(summary());
  m_summary->setWordWrap(true);
  m_summary->setObjectName(QStringLiteral("compareSummary"));
  m_cells->setObjectName(QStringLiteral("compareCells"));
  m_cells->setReadOnly(true);
  m_cells->setPlainText(differingCells());
  m_cells->setVisible(!m_cells->toPlainText().isEmpty());
  m_cells->setMaximumHeight(140);
  auto* views = new QHBoxLayout;
  for (HeatmapView* v : {m_current, m_other, m_difference}) {
    v->setMinimumSize(320, 320);
    views->addWidget(v, 1);
  }
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_summary);
  layout->addLayout(views, 1);
  layout->addWidget(m_cells);
  layout->addWidget(buttons);
  resize(1200, 520);
}

QString CompareDialog::summary() const {
  const Comparison& c = m_comparison;
  if (!c.comparable || !m_a->synced || !m_b->synced)
    return tr("Not comparable: %1.").arg(QString::fromStdString(c.why));
  // Rank by rank too: equal synced matrices can hide ranks that counted different samples.
  QStringList ranks;
  for (int r : c.ranks_differing) ranks << QString::number(r);
  const QString perRank =
      ranks.isEmpty()
          ? QString()
          : tr(" The own matrices of ranks %1 differ.").arg(ranks.join(QStringLiteral(", ")));
  if (c.equal) return tr("The reported matrices are equal.") + perRank;
  return tr("The reported matrices differ in %1 cell(s) and %2 row sum(s).")
             .arg(c.cells_differing)
             .arg(c.rows.size()) +
         perRank;
}

QString CompareDialog::differingCells() const {
  const Comparison& c = m_comparison;
  if (!c.comparable || c.equal || !m_a->synced || !m_b->synced) return {};
  QStringList lines;
  const int32_t n = m_a->classes();
  for (int32_t t = 0; t < n; ++t) {
    for (int32_t p = 0; p < n; ++p) {
      const double d = c.difference.at(t, p);
      if (d == 0) continue;
      lines << tr("true %1, predicted %2: A %3, B %4 (B − A = %5)")
                   .arg(QString::fromStdString(m_a->class_name(t)),
                        QString::fromStdString(m_a->class_name(p)))
                   .arg(m_a->synced->at(t, p))
                   .arg(m_b->synced->at(t, p))
                   .arg(d > 0 ? QStringLiteral("+%1").arg(d) : QString::number(d));
    }
  }
  return lines.join(QLatin1Char('\n'));
}

}  // namespace shardlens::ui

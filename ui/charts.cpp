#include "ui/charts.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <numeric>

#include "ui/render/heatmap_source.h"

namespace shardlens::ui {
namespace {

QChartView* makeView(QWidget* parent) {
  auto* view = new QChartView(new QChart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  view->chart()->setAnimationOptions(QChart::NoAnimation);  // live updates must not lag
  view->chart()->legend()->setAlignment(Qt::AlignBottom);
  QFont small = view->chart()->legend()->font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  view->chart()->legend()->setFont(small);
  view->chart()->setMargins(QMargins(2, 2, 2, 2));
  view->setMinimumHeight(180);
  return view;
}

void setAxes(QChart* chart, QAbstractSeries* series, const QStringList& categories, double top) {
  for (QAbstractAxis* a : chart->axes()) {
    chart->removeAxis(a);
    delete a;
  }
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  x->setLabelsAngle(categories.size() > 12 ? -90 : 0);
  auto* y = new QValueAxis;
  y->setRange(0, std::max(1.0, top * 1.05));
  y->setLabelFormat(QStringLiteral("%.0f"));
  y->applyNiceNumbers();  // round ticks (0, 20, 40, ...), not fractions of the maximum
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
}

// Row sums of the per-rank matrices added up: all a run that never synchronized counted.
std::vector<double> countedByRanks(const Evaluation& e) {
  std::vector<double> sums(size_t(e.classes()), 0.0);
  for (const Matrix& m : e.per_rank) {
    const auto rows = m.row_sums();
    for (size_t c = 0; c < sums.size() && c < rows.size(); ++c) sums[c] += rows[c];
  }
  return sums;
}

// Classes to show: all when few, else the ones with the largest row-sum error.
std::vector<int> shownClasses(const Evaluation& e, int limit) {
  const auto obs = e.synced ? e.synced->row_sums() : countedByRanks(e);
  const auto exp = render::trueRowCounts(e);
  std::vector<int> idx(obs.size());
  std::iota(idx.begin(), idx.end(), 0);
  if (int(idx.size()) <= limit) return idx;
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
    return std::abs(obs[size_t(a)] - exp[size_t(a)]) > std::abs(obs[size_t(b)] - exp[size_t(b)]);
  });
  idx.resize(size_t(limit));
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace

void ChartsPanel::fitCategoryLabels(QChartView* view) {
  QChart* chart = view->chart();
  for (QAbstractAxis* a : chart->axes(Qt::Horizontal)) {
    auto* x = qobject_cast<QBarCategoryAxis*>(a);
    if (!x || x->count() == 0) continue;
    const QFontMetricsF fm(x->labelsFont());
    double widest = 0;
    for (const QString& c : x->categories()) widest = std::max(widest, fm.horizontalAdvance(c));
    // Before the first layout the plot area is empty: the view's width is near enough.
    const double plot =
        chart->plotArea().width() > 0 ? chart->plotArea().width() : view->width() * 0.8;
    const bool fits = widest + 8 <= plot / x->count();
    x->setLabelsAngle(fits ? 0 : -90);
  }
}

void ChartsPanel::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  for (QChartView* v : {m_classes, m_ranks}) fitCategoryLabels(v);
}

ChartsPanel::ChartsPanel(QWidget* parent)
    : QWidget(parent),
      m_classes(makeView(this)),
      m_ranks(makeView(this)),
      m_epochs(makeView(this)) {
  m_classes->setObjectName(QStringLiteral("classChart"));
  m_ranks->setObjectName(QStringLiteral("rankChart"));
  m_epochs->setObjectName(QStringLiteral("epochChart"));
  m_epochs->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_classes);
  layout->addWidget(m_ranks);
  layout->addWidget(m_epochs);
}

void ChartsPanel::setResult(const ResultPtr& result) {
  if (!result) return;
  const Evaluation& e = result->eval;
  {
    QChart* chart = m_classes->chart();
    chart->removeAllSeries();
    const bool synced = e.synced.has_value();
    const auto obs = synced ? e.synced->row_sums() : countedByRanks(e);
    const auto exp = render::trueRowCounts(e);
    const auto classes = shownClasses(e, kMaxClassBars);
    // Without an expected matrix (a run that did not record every prediction) the bar is
    // the true class count, which is what a correct row sums to anyway.
    auto* expected = new QBarSet(e.expected ? tr("Expected") : tr("True count"));
    // A run that never synchronized has only what its ranks counted.
    auto* observed =
        new QBarSet(synced ? tr("Observed (synced)") : tr("Counted by the ranks (never synced)"));
    expected->setColor(QColor(0x9e, 0x9e, 0x9e));
    observed->setColor(QColor(0x21, 0x91, 0x8c));
    QStringList categories;
    double top = 0;
    for (int c : classes) {
      *expected << exp[size_t(c)];
      *observed << obs[size_t(c)];
      top = std::max({top, exp[size_t(c)], obs[size_t(c)]});
      categories << QString::fromStdString(e.class_name(c));
    }
    auto* series = new QBarSeries;
    series->append(expected);
    series->append(observed);
    chart->addSeries(series);
    chart->setTitle(int(classes.size()) < e.classes()
                        ? tr("Row sums per class (%1 largest errors)").arg(classes.size())
                        : tr("Row sums per class"));
    setAxes(chart, series, categories, top);
    fitCategoryLabels(m_classes);
  }
  {
    QChart* chart = m_ranks->chart();
    chart->removeAllSeries();
    const ShardSummary& s = result->shards;
    auto* real = new QBarSet(tr("Real"));
    auto* padding = new QBarSet(tr("Padding"));
    auto* sanity = new QBarSet(tr("Sanity leak"));
    auto* cut = new QBarSet(tr("Cut"));
    auto* never = new QBarSet(tr("Never"));
    real->setColor(QColor(0x3b, 0x52, 0x8b));
    padding->setColor(QColor(0xf1, 0xa3, 0x40));
    sanity->setColor(QColor(0xb0, 0x7a, 0xa1));
    cut->setColor(QColor(0xbd, 0xbd, 0xbd));
    never->setColor(QColor(0x40, 0x40, 0x40));
    QStringList categories;
    double top = 0;
    for (int r = 0; r < int(s.ranks.size()); ++r) {
      const RankTotals& t = s.ranks[size_t(r)];
      *real << double(t.real);
      *padding << double(t.padding);
      *sanity << double(t.sanity);
      *cut << double(t.notEvaluated);
      *never << 0;
      top = std::max(top, double(t.real + t.padding + t.sanity + t.notEvaluated));
      categories << tr("r%1").arg(r);
    }
    *real << 0;
    *padding << 0;
    *sanity << 0;
    *cut << 0;
    *never << double(s.neverTotal);
    top = std::max(top, double(s.neverTotal));
    categories << tr("never");
    auto* series = new QStackedBarSeries;
    series->append({real, padding, sanity, cut, never});
    chart->addSeries(series);
    chart->setTitle(tr("Records per rank"));
    setAxes(chart, series, categories, top);
    fitCategoryLabels(m_ranks);
  }
  showEpochs(result);
}

void ChartsPanel::showEpochs(const ResultPtr& result) {
  const bool several = result->epochs && result->epochs->size() > 1;
  m_epochs->setVisible(several);
  if (!several) return;
  QChart* chart = m_epochs->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) {
    chart->removeAxis(a);
    delete a;
  }
  const auto& all = *result->epochs;
  const Evaluation& e = result->eval;
  const int classes = e.classes();
  // Off by how much, per class and epoch: 0 is a right row. What the ranks counted stands
  // in for an epoch that never synchronized.
  std::vector<std::vector<double>> off(static_cast<size_t>(classes));
  double worst = 1;
  for (const auto& r : all) {
    const Evaluation& x = r->eval;
    std::vector<double> rows(size_t(classes), 0.0);
    if (x.synced) {
      rows = x.synced->row_sums();
    } else {
      for (const Matrix& m : x.per_rank) {
        const auto s = m.row_sums();
        for (size_t c = 0; c < rows.size() && c < s.size(); ++c) rows[c] += s[c];
      }
    }
    for (int c = 0; c < classes; ++c) {
      const double d = rows[size_t(c)] - double(x.meta.class_counts[size_t(c)]);
      off[size_t(c)].push_back(d);
      worst = std::max(worst, std::abs(d));
    }
  }
  // The classes that drift most, when there are many.
  std::vector<int> shown(static_cast<size_t>(classes));
  std::iota(shown.begin(), shown.end(), 0);
  const auto spread = [&](int c) {
    const auto [lo, hi] = std::minmax_element(off[size_t(c)].begin(), off[size_t(c)].end());
    return *hi - *lo + std::abs(*hi) + std::abs(*lo);
  };
  std::stable_sort(shown.begin(), shown.end(), [&](int a, int b) { return spread(a) > spread(b); });
  if (int(shown.size()) > kMaxEpochLines) shown.resize(size_t(kMaxEpochLines));
  std::sort(shown.begin(), shown.end());
  auto* x = new QValueAxis;
  x->setRange(double(all.front()->eval.epoch()), double(all.back()->eval.epoch()));
  x->setTickCount(int(std::min<size_t>(all.size(), 11)));
  x->setLabelFormat(QStringLiteral("%d"));
  x->setTitleText(tr("epoch"));
  auto* y = new QValueAxis;
  y->setRange(-worst * 1.1, worst * 1.1);
  y->setLabelFormat(QStringLiteral("%+.0f"));
  y->setTitleText(tr("row sum − true count"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (int c : shown) {
    auto* line = new QLineSeries;
    line->setName(QString::fromStdString(e.class_name(c)));
    for (size_t k = 0; k < all.size(); ++k)
      line->append(double(all[k]->eval.epoch()), off[size_t(c)][k]);
    chart->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
  }
  // Where this epoch is.
  auto* here = new QScatterSeries;
  here->setName(tr("epoch %1 (shown)").arg(e.epoch()));
  here->setMarkerSize(9);
  for (int c : shown) here->append(double(e.epoch()), off[size_t(c)][result->epochIndex]);
  chart->addSeries(here);
  here->attachAxis(x);
  here->attachAxis(y);
  chart->setTitle(
      int(shown.size()) < classes
          ? tr("Row sum − true count per epoch (%1 classes that drift most)").arg(shown.size())
          : tr("Row sum − true count per epoch (0: the row is right)"));
}

}  // namespace shardlens::ui

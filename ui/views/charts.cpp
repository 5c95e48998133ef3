#include "ui/views/charts.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/render/task_words.h"

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

// Returns where the value axis starts, after its rounding to nice numbers.
double setAxes(QChart* chart, QAbstractSeries* series, const QStringList& categories, double top,
               double bottom = 0) {
  for (QAbstractAxis* a : chart->axes()) {
    chart->removeAxis(a);
    delete a;
  }
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  x->setLabelsAngle(categories.size() > 12 ? -90 : 0);
  auto* y = new QValueAxis;
  y->setRange(bottom, std::max(bottom + 1.0, top + (top - bottom) * 0.05));
  y->setLabelFormat(QStringLiteral("%.0f"));
  y->applyNiceNumbers();  // round ticks (0, 20, 40, ...), not fractions of the maximum
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  return y->min();
}

// Where the row-sum chart's axis starts: 0, unless the largest difference between a bar pair
// would be under a tenth of the axis (a row sum of 52 against 51 draws two equal bars):
// then an axis from the data, a span of about 10 differences below the top, so a difference
// of 1 is a step of a tenth of the plot. The chart's title says where the axis starts.
double rowSumAxisBottom(double lowest, double top, double largestDifference) {
  if (largestDifference <= 0 || largestDifference * 10 >= top) return 0;
  const double bottom = std::min(lowest - 2 * largestDifference, top - 10 * largestDifference);
  return bottom > 0 ? std::floor(bottom) : 0.0;
}

// Classes to show: all when few, else the ones with the largest row-sum error.
std::vector<int> shownClasses(const Evaluation& e, int limit) {
  const std::vector<int32_t>& byError = e.row_check.by_error;
  std::vector<int> idx(byError.begin(),
                       byError.begin() + std::min<ptrdiff_t>(limit, byError.size()));
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
    // Qt Charts elides a label wider than about 3/4 of its category: room to spare, or upright.
    const bool fits = widest * 1.4 + 8 <= plot / x->count();
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
      m_drift(new DriftView(this)) {
  m_classes->setObjectName(QStringLiteral("classChart"));
  m_ranks->setObjectName(QStringLiteral("rankChart"));
  m_drift->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_classes);
  layout->addWidget(m_ranks);
  layout->addWidget(m_drift, 1);
}

void ChartsPanel::setResult(const ResultPtr& result) {
  if (!result) return;
  const Evaluation& e = result->eval;
  // Classes chart: the bars, their names and the title, compared with what is shown.
  Shown classesNow;
  {
    const RowCheck& rows = e.row_check;
    const auto classes = shownClasses(e, kMaxClassBars);
    const QString unit =
        render::countsCells(e) ? QStringLiteral(", ") + render::countsWord(e) : QString();
    classesNow.title =
        int(classes.size()) < e.classes()
            ? tr("Row sums per class (%1 largest errors%2)").arg(classes.size()).arg(unit)
        : render::countsCells(e) ? tr("Row sums per class (%1)").arg(render::countsWord(e))
                                 : tr("Row sums per class");
    // The legend's words depend on whether there is an expected and a synced matrix.
    classesNow.categories << (e.expected ? QStringLiteral("e") : QStringLiteral("t"))
                          << (e.synced ? QStringLiteral("s") : QStringLiteral("r"));
    for (int c : classes) {
      classesNow.categories << QString::fromStdString(e.class_name(c));
      classesNow.values.push_back(double(rows.truth[size_t(c)]));
      classesNow.values.push_back(rows.observed[size_t(c)]);
    }
  }
  if (classesNow != m_classesShown) {
    m_classesShown = classesNow;
    QChart* chart = m_classes->chart();
    chart->removeAllSeries();
    const bool synced = e.synced.has_value();
    // The row check's sums: the synced matrix's, or what the ranks counted when never synced.
    const RowCheck& rows = e.row_check;
    const auto classes = shownClasses(e, kMaxClassBars);
    // The grey bar is the class's true count, which the expected matrix's row sums to; named
    // "True count" for a run that did not record every prediction (no expected matrix).
    auto* expected = new QBarSet(e.expected ? tr("Expected") : tr("True count"));
    // A run that never synchronized has only what its ranks counted.
    auto* observed =
        new QBarSet(synced ? tr("Observed (synced)") : tr("Counted by the ranks (never synced)"));
    expected->setColor(QColor(0x9e, 0x9e, 0x9e));
    observed->setColor(QColor(0x21, 0x91, 0x8c));
    QStringList categories;
    double top = 0, lowest = std::numeric_limits<double>::infinity(), largestDifference = 0;
    for (int c : classes) {
      const double truth = double(rows.truth[size_t(c)]), sum = rows.observed[size_t(c)];
      *expected << truth;
      *observed << sum;
      top = std::max({top, truth, sum});
      lowest = std::min({lowest, truth, sum});
      largestDifference = std::max(largestDifference, std::abs(sum - truth));
      categories << QString::fromStdString(e.class_name(c));
    }
    const double bottom = rowSumAxisBottom(lowest, top, largestDifference);
    auto* series = new QBarSeries;
    series->append(expected);
    series->append(observed);
    chart->addSeries(series);
    // Rows of a pixel (token) matrix sum pixels: said in the title, as the axis is bare.
    const double from = setAxes(chart, series, categories, top, bottom);
    chart->setTitle(from > 0 ? classesNow.title + tr(" — axis from %1").arg(from)
                             : classesNow.title);
    fitCategoryLabels(m_classes);
  }
  Shown ranksNow;
  ranksNow.title = render::countsCells(e) ? tr("Records per rank (%1)").arg(render::samplesWord(e))
                                          : tr("Records per rank");
  for (const RankTotals& t : result->shards.ranks)
    ranksNow.values.insert(ranksNow.values.end(), {double(t.real), double(t.padding),
                                                   double(t.sanity), double(t.notEvaluated)});
  ranksNow.values.push_back(double(result->shards.neverTotal));
  if (ranksNow != m_ranksShown) {
    m_ranksShown = ranksNow;
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
    // Only what some rank has in the legend: five entries do not fit a narrow dock whole.
    for (QBarSet* set : {padding, sanity, cut, never})
      for (QLegendMarker* marker : chart->legend()->markers(series))
        if (marker->label() == set->label()) marker->setVisible(set->sum() > 0);
    chart->setTitle(ranksNow.title);
    setAxes(chart, series, categories, top);
    fitCategoryLabels(m_ranks);
  }
  m_drift->setVisible(result->epochs && result->epochs->size() > 1);
  m_drift->setResult(result);
}

}  // namespace shardlens::ui

#include "ui/panels/matrix_panel.h"

#include <QEvent>
#include <QGridLayout>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/render/heatmap_painter.h"

namespace shardlens::ui {

namespace {
constexpr double kRankMaxAspect = 2.0;  // how upright a per-rank view may stretch
// How upright the synced view may stretch beside a side column taller than its square (a
// narrow centre, 1280 x 800): its rows spread down the column instead of leaving a blank
// band below it.
constexpr double kSyncedMaxAspect = 2.0;
}  // namespace

MatrixPanel::MatrixPanel(QWidget* parent)
    : QWidget(parent),
      m_synced(new HeatmapView(this)),
      m_expected(new HeatmapView(this)),
      m_difference(new HeatmapView(this)),
      m_rankGrid(new QGridLayout),
      m_rankTitle(new QLabel(this)) {
  m_synced->setObjectName(QStringLiteral("syncedView"));
  m_expected->setObjectName(QStringLiteral("expectedView"));
  m_difference->setObjectName(QStringLiteral("differenceView"));
  wire(m_synced, ViewKind::Synced, 0);
  wire(m_expected, ViewKind::Expected, 0);
  wire(m_difference, ViewKind::Difference, 0);
  // The reported matrix gets the most room; expected and difference stack beside it, or
  // below it where the panel is too narrow for both readable (arrange()).
  m_top = new QGridLayout;
  placeTopViews(Arrangement::SideBySide);
  m_rankTitle->setText(tr("<b>Per rank</b> (as accumulated on each rank, one colour range)"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  // fitHeights sets the views' heights; the stretch takes what they leave.
  layout->addLayout(m_top);
  layout->addWidget(m_rankTitle);
  layout->addLayout(m_rankGrid);
  layout->addStretch(1);
}

void MatrixPanel::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  scheduleShownRanks();
  arrange();
  fitHeights();
}

bool MatrixPanel::event(QEvent* e) {
  // In a scroll area the panel is never narrower than its minimum, so the room to arrange
  // for is the viewport's: watch it.
  if (e->type() == QEvent::ParentAboutToChange && parentWidget())
    parentWidget()->removeEventFilter(this);
  if (e->type() == QEvent::ParentChange && parentWidget()) parentWidget()->installEventFilter(this);
  return QWidget::event(e);
}

bool MatrixPanel::eventFilter(QObject* watched, QEvent* e) {
  if (watched == parentWidget() && e->type() == QEvent::Resize) arrange();
  return QWidget::eventFilter(watched, e);
}

int MatrixPanel::roomWidth() const {
  return parentWidget() ? parentWidget()->width() : width();
}

void MatrixPanel::placeTopViews(Arrangement arrangement) {
  for (HeatmapView* v : {m_synced, m_expected, m_difference}) m_top->removeWidget(v);
  switch (arrangement) {
    case Arrangement::Stacked:
      m_top->addWidget(m_synced, 0, 0);
      m_top->addWidget(m_expected, 1, 0);
      m_top->addWidget(m_difference, 2, 0);
      m_top->setColumnStretch(0, 1);
      m_top->setColumnStretch(1, 0);
      break;
    case Arrangement::PairBelow:
      m_top->addWidget(m_synced, 0, 0, 1, 2);
      m_top->addWidget(m_expected, 1, 0);
      m_top->addWidget(m_difference, 1, 1);
      m_top->setColumnStretch(0, 1);
      m_top->setColumnStretch(1, 1);
      m_top->setAlignment(m_synced, Qt::Alignment());
      break;
    case Arrangement::SideBySide:
      m_top->addWidget(m_synced, 0, 0, 2, 1);
      m_top->addWidget(m_expected, 0, 1);
      m_top->addWidget(m_difference, 1, 1);
      m_top->setColumnStretch(0, 3);
      m_top->setColumnStretch(1, 2);
      break;
  }
  m_arrangement = arrangement;
}

int MatrixPanel::sideMinimumWidth() const {
  return std::max(m_expected->minimumSizeHint().width(), m_difference->minimumSizeHint().width());
}

int MatrixPanel::sideBySideWidth() const {
  return m_synced->minimumSizeHint().width() + sideMinimumWidth() + 6 + 8;  // spacing, margins
}

int MatrixPanel::balancedWidth() const {
  // Nothing shown yet, the views' sizes say nothing of the matrices to come.
  if (!m_result || m_arrangement != Arrangement::SideBySide) return sideBySideWidth();
  const int sideColumn =
      m_expected->minimumSizeHint().height() + m_difference->minimumSizeHint().height() + 6;
  // The synced view's width for a square grid that tall: what surrounds the grid across,
  // less what surrounds it down (its minimum size is the same grid plus each).
  const QSize least = m_synced->minimumSizeHint();
  const int synced = sideColumn + least.width() - least.height();
  // fitHeights gives the synced view at most 70 % of the width, the side column the rest.
  return std::max({sideBySideWidth(), synced + sideMinimumWidth() + 6 + 8, synced * 10 / 7 + 8});
}

void MatrixPanel::arrange() {
  // Side by side while both columns keep a readable grid; else one above the other, each
  // the panel's width (the panel scrolls down to them).
  const int room = roomWidth() - 8;
  const Arrangement arrangement = roomWidth() >= sideBySideWidth()     ? Arrangement::SideBySide
                                  : room >= 2 * sideMinimumWidth() + 6 ? Arrangement::PairBelow
                                                                       : Arrangement::Stacked;
  if (arrangement != m_arrangement) placeTopViews(arrangement);
  // As many rank columns as fit whole, up to four: never a rank cut at the right edge.
  const int rankWidth = m_ranks.empty() ? 1 : m_ranks.front()->minimumSizeHint().width() + 6;
  const int columns = std::clamp((room + 6) / rankWidth, 1, kMaxRankColumns);
  if (columns != m_rankColumns) {
    m_rankColumns = columns;
    placeRankViews();
  }
}

void MatrixPanel::placeRankViews() {
  for (HeatmapView* v : m_ranks) m_rankGrid->removeWidget(v);
  const int columns = rankColumns();
  for (int r = 0; r < int(m_ranks.size()); ++r)
    m_rankGrid->addWidget(m_ranks[size_t(r)], r / columns, r % columns);
}

int MatrixPanel::rankColumns() const {
  return std::clamp(std::min(int(m_ranks.size()), m_rankColumns), 1, kMaxRankColumns);
}

// Square grids are limited by width; capping each view's height at what its width can use
// leaves no blank band inside the views, and the spare height goes below them.
void MatrixPanel::fitHeights() {
  const int w = width() - 8;
  const int columns = rankColumns();
  const auto fixSquare = [](HeatmapView* v, int width) {
    v->setFixedHeight(std::max(v->minimumSizeHint().height(), v->idealHeight(width)));
  };
  if (m_arrangement != Arrangement::SideBySide)
    for (HeatmapView* v : m_ranks) fixSquare(v, w / columns - 6);
  if (m_arrangement == Arrangement::Stacked) {
    // One view above the other at the panel's width: each as tall as its square grid needs.
    for (HeatmapView* v : {m_synced, m_expected, m_difference}) fixSquare(v, w);
    return;
  }
  if (m_arrangement == Arrangement::PairBelow) {
    // The pair at half the width each, below the synced view, which leaves them in sight:
    // it is as tall as the viewport less the pair, never below its readable minimum nor
    // past its square (the synced view never shorter than the pair).
    const int half = (w - 6) / 2;
    int pair = 0;  // one height for the row, so the two start and end together
    for (HeatmapView* v : {m_expected, m_difference})
      pair = std::max({pair, v->minimumSizeHint().height(), v->idealHeight(half)});
    m_expected->setFixedHeight(pair);
    m_difference->setFixedHeight(pair);
    const int viewport = parentWidget() ? parentWidget()->height() : height();
    const int square = std::max(m_synced->minimumSizeHint().height(), m_synced->idealHeight(w));
    m_synced->setFixedHeight(std::min(square, std::max(viewport - pair - 14, pair)));
    return;
  }
  // Side by side the expected and difference views take what height the layout gives them.
  for (HeatmapView* v : {m_expected, m_difference}) v->setMinimumHeight(0);
  // Height the per-rank grid and its title need; what is left is the synced view's.
  int ranksHeight = m_rankTitle->sizeHint().height() + 12;
  if (!m_ranks.empty()) {
    const HeatmapView* v = m_ranks.front();
    const int rows = (int(m_ranks.size()) + columns - 1) / columns;
    ranksHeight +=
        rows * (std::max(v->minimumSizeHint().height(), v->idealHeight(w / columns - 6)) + 6);
  }
  // Spare height (a closed welcome panel, a tall window) widens the synced view, whose
  // square grid is limited by its width, instead of leaving an empty band below the views.
  // The expected and difference views keep a readable width.
  const int minSide = std::max(280, sideMinimumWidth());
  int share = 60;  // percent of the width for the synced view
  while (share < 70 && w * (100 - share - 2) / 100 >= minSide &&
         m_synced->idealHeight(w * (share + 2) / 100 - 6) <= height() - ranksHeight)
    share += 2;
  m_top->setColumnStretch(0, share);
  m_top->setColumnStretch(1, 100 - share);
  // The widths the layout gives: the side column never below its readable minimum.
  const int sideWidth = std::max(sideMinimumWidth(), w * (100 - share) / 100 - 6);
  const int syncedWidth = std::max(m_synced->minimumSizeHint().width(), w - sideWidth - 6);
  const int big =
      std::max(m_synced->minimumSizeHint().height(), m_synced->idealHeight(syncedWidth));
  // Each side view at most its square and, together, about the synced view's height; never
  // below its readable minimum (then the side column is the taller).
  for (HeatmapView* v : {m_expected, m_difference})
    v->setMaximumHeight(
        std::max(v->minimumSizeHint().height(), std::min(v->idealHeight(sideWidth), big / 2)));
  // A side column taller than the synced view (a narrow centre, both at their minimums): the
  // synced view stays at the top beside them rather than centred in the column's height.
  const int sideHeight =
      m_expected->minimumSizeHint().height() + m_difference->minimumSizeHint().height() + 6;
  m_top->setAlignment(m_synced, sideHeight > big ? Qt::AlignTop : Qt::Alignment());
  // Beside a taller side column the synced view stretches upright, down to its bottom, up to
  // kSyncedMaxAspect (its grid ~ 3/4 of its square height, as the ranks' below).
  const int sideColumn = m_expected->maximumHeight() + m_difference->maximumHeight() + 6;
  const int tallest = big + int((kSyncedMaxAspect - 1) * 0.75 * big);
  const int synced = std::clamp(sideColumn, big, tallest);
  const int rows = m_ranks.empty() ? 1 : (int(m_ranks.size()) + columns - 1) / columns;
  const int top = std::max(synced, sideColumn);
  const int perRow = (height() - top - m_rankTitle->sizeHint().height() - 24) / rows - 6;
  const bool roomy = height() - ranksHeight - 8 >= top;
  if (!roomy) {
    // Short of room (many ranks, a small window): the layout shares what there is, each
    // view capped at its square; the panel scrolls past the minimums.
    m_synced->setMinimumHeight(m_synced->minimumSizeHint().height());
    m_synced->setMaximumHeight(synced);
    for (HeatmapView* v : m_ranks) {
      v->setMinimumHeight(v->minimumSizeHint().height());
      v->setMaximumHeight(std::max(v->minimumSizeHint().height(), v->idealHeight(w / columns - 6)));
    }
    return;
  }
  // Room to spare (a closed welcome panel, a tall window): heights are set, not left to the
  // layout's stretch. The synced view takes its square, and the per-rank row what is left
  // (up to kRankMaxAspect times as tall as its grid is wide), so no empty band stays below.
  m_synced->setFixedHeight(synced);
  for (HeatmapView* v : m_ranks) {
    const int square = std::max(v->minimumSizeHint().height(), v->idealHeight(w / columns - 6));
    const int upright = square + int((kRankMaxAspect - 1) * 0.75 * square);  // grid ~ 3/4
    v->setFixedHeight(std::clamp(perRow, square, upright));
  }
}

std::vector<HeatmapView*> MatrixPanel::allViews() const {
  std::vector<HeatmapView*> v{m_synced, m_expected, m_difference};
  v.insert(v.end(), m_ranks.begin(), m_ranks.end());
  return v;
}

void MatrixPanel::wire(HeatmapView* view, ViewKind kind, int rank) {
  // Views show display positions; the tooltip and click speak class ids.
  const auto toRef = [this, view, kind, rank](int row, int col) {
    CellRef ref;
    ref.kind = kind;
    ref.rank = rank;
    const auto& of = view->data().classOf;
    ref.trueClass = of.empty() ? row : of[size_t(row)];
    ref.predClass = col < 0 ? 0 : (of.empty() ? col : of[size_t(col)]);
    return ref;
  };
  view->setTooltipProvider([this, toRef, kind, rank](int row, int col) -> QString {
    if (!m_result) return {};
    const CellRef ref = toRef(row, col);
    return col < 0 ? rowSumTooltip(*m_result, kind, rank, ref.trueClass)
                   : cellTooltip(*m_result, ref);
  });
  connect(view, &HeatmapView::cellClicked, this,
          [this, toRef](int row, int col) { emit cellActivated(toRef(row, col)); });
}

render::HeatmapStyle MatrixPanel::compactStyle() const {
  render::HeatmapStyle s = m_style;
  s.compact = true;
  s.fontPixels = std::max(8, m_style.fontPixels - 1);
  s.showColorBar = false;
  // The small multiples may stretch upright into height the square views cannot use (a
  // closed welcome panel, a tall window), so no empty band is left below them.
  s.maxAspect = kRankMaxAspect;
  return s;
}

void MatrixPanel::ensureRankViews(int world) {
  while (int(m_ranks.size()) > world) {
    delete m_ranks.back();
    m_ranks.pop_back();
  }
  while (int(m_ranks.size()) < world) {
    const int rank = int(m_ranks.size());
    auto* view = new HeatmapView(this);
    view->setObjectName(QStringLiteral("rankView%1").arg(rank));
    view->setStyle(compactStyle());
    wire(view, ViewKind::Rank, rank);
    m_ranks.push_back(view);
    emit viewCreated(view);
  }
  placeRankViews();
  arrange();
}

void MatrixPanel::setRunner(EvaluationRunner* runner) {
  m_runner = runner;
  if (m_runner) m_runner->setViewRequest(m_request);
}

void MatrixPanel::setOptions(const render::MatrixOptions& matrix,
                             const render::HeatmapStyle& style) {
  m_style = style;
  render::HeatmapStyle synced = style;
  synced.maxAspect = kSyncedMaxAspect;  // a square grid unless stretched upright (fitHeights)
  m_synced->setStyle(synced);
  m_expected->setStyle(style);
  m_difference->setStyle(style);
  for (HeatmapView* v : m_ranks) v->setStyle(compactStyle());
  render::ViewRequest next = m_request;
  next.matrix = matrix;
  next.labelFonts = {render::heatmapFont(style, true), render::heatmapFont(compactStyle(), true)};
  // Fixed ranges of counts mean nothing for fractions: a new normalization fixes anew, at
  // the ranges of its own views.
  if (matrix.normalization != m_request.matrix.normalization && next.fixed) {
    next.fixed.reset();
    m_refix = true;
  }
  request(next);
  fitHeights();
}

void MatrixPanel::setFixedRange(bool on) {
  if (on == fixedRange()) return;
  render::ViewRequest next = m_request;
  next.fixed.reset();
  if (on && m_views) next.fixed = m_views->ranges;
  if (on && m_views && !m_views->request.fixed) {
    // Fixing the ranges shown changes no colour: the views stay, marked as fixed.
    auto same = std::make_shared<render::ViewSet>(*m_views);
    same->request.fixed = next.fixed;
    m_request = next;
    if (m_runner) m_runner->setViewRequest(m_request);
    show(same);
    return;
  }
  request(next);
}

render::FigureSetOptions MatrixPanel::figureRanges() const {
  render::FigureSetOptions o;
  if (m_request.fixed) {
    o.vmax = m_request.fixed->matrices;
    o.vmaxExpected = m_request.fixed->expected;  // the window's two ranges, not one
    o.vmaxDifference = m_request.fixed->difference;
    o.vmaxRanks = m_request.fixed->ranks;
  }
  return o;
}

void MatrixPanel::request(const render::ViewRequest& next) {
  const bool newData = !next.sameData(m_request);
  m_request = next;
  if (m_runner) m_runner->setViewRequest(m_request);
  if (!newData) return;
  if (m_pendingThen) {
    // A result waiting for its views waits for these instead.
    prepare(m_pendingResult, std::move(m_pendingThen));
  } else if (m_result) {
    const ResultPtr shown = m_result;
    prepare(shown, [this, shown] { setResult(shown); });
  }
}

bool MatrixPanel::canShow(const ResultPtr& result) const {
  const auto fits = [this](const render::ViewSetPtr& v) {
    return v && v->request.sameData(m_request);
  };
  return result && (fits(result->views) || (m_preparedFor.lock() == result && fits(m_prepared)));
}

void MatrixPanel::prepare(ResultPtr result, std::function<void()> then) {
  const quint64 ticket = ++m_ticket;
  m_pendingResult = result;
  m_pendingThen = std::move(then);
  auto work = [result, request = m_request](JobProgress* progress) {
    return render::prepareViews(result->eval, request,
                                [progress] { return progress && progress->cancelled(); });
  };
  if (!m_runner) {
    delivered(ticket, work(nullptr));
    return;
  }
  m_runner->startTask(
      this, tr("Preparing the views"), std::move(work),
      [this, ticket](render::ViewSetPtr views) { delivered(ticket, std::move(views)); },
      [](const QString&) {});
}

void MatrixPanel::delivered(quint64 ticket, render::ViewSetPtr views) {
  if (ticket != m_ticket || !views) return;  // superseded, or cancelled
  m_preparedFor = m_pendingResult;
  m_prepared = std::move(views);
  m_pendingResult.reset();
  const auto then = std::move(m_pendingThen);
  m_pendingThen = nullptr;
  if (then) then();
}

void MatrixPanel::setResult(ResultPtr result) {
  if (!result) return;
  if (!canShow(result)) {
    // No runner (tests) or a caller that did not prepare: prepared here, on this thread.
    m_preparedFor = result;
    m_prepared = render::prepareViews(result->eval, m_request);
  }
  m_result = std::move(result);
  const auto fits = [this](const render::ViewSetPtr& v) {
    return v && v->request.sameData(m_request);
  };
  show(fits(m_result->views) ? m_result->views : m_prepared);
}

void MatrixPanel::show(render::ViewSetPtr views) {
  m_views = std::move(views);
  ++m_viewsShown;
  m_ranksPreparing.clear();
  ensureRankViews(int(m_views->ranks.size()));
  m_synced->setData(m_views->synced);
  m_expected->setData(m_views->expected);
  m_difference->setData(m_views->difference);
  for (size_t r = 0; r < m_views->ranks.size(); ++r) {
    // A map left for later (off screen when the result came): said so until it is made.
    m_ranks[r]->setData(m_views->ranks[r]
                            ? m_views->ranks[r]
                            : std::make_shared<const render::HeatmapData>(render::emptyHeatmap(
                                  tr("Rank %1").arg(r), tr("Prepared when scrolled to"))));
  }
  scheduleShownRanks();
  arrange();  // the views' minimums follow their data (labels, sums)
  fitHeights();
  if (m_refix && m_views->request.sameData(m_request)) {
    m_refix = false;
    setFixedRange(true);
  }
}

void MatrixPanel::moveEvent(QMoveEvent* e) {
  QWidget::moveEvent(e);
  scheduleShownRanks();
}

void MatrixPanel::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  scheduleShownRanks();
}

void MatrixPanel::scheduleShownRanks() {
  if (m_shownRanksScheduled) return;
  m_shownRanksScheduled = true;
  QTimer::singleShot(0, this, [this] {
    m_shownRanksScheduled = false;
    prepareShownRanks();
  });
}

void MatrixPanel::prepareShownRanks() {
  std::vector<int> shown;
  for (size_t r = 0; r < m_ranks.size(); ++r)
    if (m_ranks[r]->isVisible() && !m_ranks[r]->visibleRegion().isEmpty()) shown.push_back(int(r));
  if (shown != m_request.shownRanks) {
    m_request.shownRanks = shown;
    if (m_runner) m_runner->setViewRequest(m_request);
  }
  if (!m_views || !m_result) return;
  std::vector<int> missing;
  for (int r : shown)
    if (size_t(r) < m_views->ranks.size() && !m_views->ranks[size_t(r)] &&
        m_ranksPreparing.insert(r).second)
      missing.push_back(r);
  if (missing.empty()) return;
  const ResultPtr result = m_result;
  const render::ViewSetPtr base = m_views;
  auto work = [result, base, missing](JobProgress* progress) {
    return render::prepareRanks(result->eval, *base, missing,
                                [progress] { return progress && progress->cancelled(); });
  };
  const quint64 shownNow = m_viewsShown;
  // Whatever ends the task, its ranks may be asked for again while these views are shown.
  const auto release = [this, shownNow, missing] {
    if (shownNow != m_viewsShown) return;
    for (int r : missing) m_ranksPreparing.erase(r);
  };
  const auto done = [this, shownNow, missing, release](render::ViewSetPtr filled) {
    release();
    if (!filled || shownNow != m_viewsShown) return;  // other views shown meanwhile
    auto merged = std::make_shared<render::ViewSet>(*m_views);
    for (int r : missing) {
      merged->ranks[size_t(r)] = filled->ranks[size_t(r)];
      m_ranks[size_t(r)]->setData(merged->ranks[size_t(r)]);
    }
    m_views = std::move(merged);
  };
  if (!m_runner) {
    done(work(nullptr));
    return;
  }
  m_runner->startTask(
      this, tr("Preparing the ranks' views"), std::move(work), done,
      [release](const QString&) { release(); }, release);
}

void MatrixPanel::repaintAll() {
  for (HeatmapView* v : allViews()) v->repaint();
}

}  // namespace shardlens::ui

#pragma once
// The centre of the window: the synced (reported), expected and difference heatmaps side by
// side, and every rank's matrix as small multiples sharing one colour range.
#include <QLabel>
#include <QWidget>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "ui/jobs/evaluation_runner.h"
#include "ui/models/cell_info.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_source.h"
#include "ui/render/view_set.h"
#include "ui/views/heatmap_view.h"

class QGridLayout;

namespace shardlens::ui {

class MatrixPanel : public QWidget {
  Q_OBJECT
 public:
  explicit MatrixPanel(QWidget* parent = nullptr);

  // Views are prepared in the runner's jobs (EvaluationResult::views) and, when a result
  // arrives without views for the current options (a run's other epoch) or the options
  // change, in a runner task: the GUI thread only swaps them in.
  void setRunner(EvaluationRunner* runner);
  // Whether `result` can be shown at once: it carries views for the current options.
  bool canShow(const ResultPtr& result) const;
  // Prepares views of `result` in the background, then calls `then` (which shows it). A
  // later prepare() or option change supersedes it: `then` is not called.
  void prepare(ResultPtr result, std::function<void()> then);
  // Shows `result`: its prepared views, or (without a runner, in tests) views prepared here.
  void setResult(ResultPtr result);
  void setOptions(const render::MatrixOptions& matrix, const render::HeatmapStyle& style);
  const ResultPtr& result() const { return m_result; }
  const render::ViewRequest& viewRequest() const { return m_request; }

  // The width at which the synced view and the expected and difference views fit side by
  // side, each with a readable grid; narrower, they stack.
  int sideBySideWidth() const;
  // Side by side, the width at which the synced view's square grid is as tall as the
  // expected and difference views at their minimum beside it: narrower, it stretches upright
  // (fitHeights). Otherwise sideBySideWidth().
  int balancedWidth() const;

  HeatmapView* syncedView() const { return m_synced; }
  HeatmapView* expectedView() const { return m_expected; }
  HeatmapView* differenceView() const { return m_difference; }
  const std::vector<HeatmapView*>& rankViews() const { return m_ranks; }
  std::vector<HeatmapView*> allViews() const;
  void repaintAll();  // synchronous repaint of every view (benchmarks)
  // A fixed colour range: the ranges shown now (matrices, difference, ranks) are kept while
  // the epoch steps or the scenario changes, so colours compare; off: each result its own.
  void setFixedRange(bool on);
  bool fixedRange() const { return m_request.fixed.has_value(); }
  // The ranges for the figure set: the fixed ones, else none (each figure its own).
  render::FigureSetOptions figureRanges() const;

 signals:
  void cellActivated(const shardlens::ui::CellRef& cell);
  void viewCreated(shardlens::ui::HeatmapView* view);  // rank views come and go with W

 protected:
  void resizeEvent(QResizeEvent* e) override;
  // Scrolled (the scroll area moves the panel) or shown: rank views that came on screen get
  // their maps (render::deferRanks()).
  void moveEvent(QMoveEvent* e) override;
  void showEvent(QShowEvent* e) override;
  bool event(QEvent* e) override;
  bool eventFilter(QObject* watched, QEvent* e) override;

 private:
  // Four rank columns at most: beyond that the small multiples get too small to read.
  static constexpr int kMaxRankColumns = 4;
  // How the synced, expected and difference views stand: the synced view beside the other
  // two; above them, the two side by side below it (a centre too narrow for three columns'
  // worth, wide enough for the pair); or each above the next.
  enum class Arrangement { SideBySide, PairBelow, Stacked };
  // Chooses the arrangement and the rank columns for the room there is.
  void arrange();
  void placeTopViews(Arrangement arrangement);
  void placeRankViews();
  int rankColumns() const;
  int roomWidth() const;  // the scroll area's viewport, where the panel is shown
  int sideMinimumWidth() const;
  void fitHeights();
  void show(render::ViewSetPtr views);
  // A new request: the runner's next jobs prepare for it, and the result shown is prepared
  // anew in the background.
  void request(const render::ViewRequest& request);
  void delivered(quint64 ticket, render::ViewSetPtr views);
  void ensureRankViews(int world);
  // The rank views on screen: the runner's next jobs prepare their maps, and those of the
  // views shown that were left for later (off screen when the result came) are made now in a
  // runner task. Scheduled once per turn of the event loop.
  void scheduleShownRanks();
  void prepareShownRanks();
  void wire(HeatmapView* view, ViewKind kind, int rank);
  render::HeatmapStyle compactStyle() const;

  ResultPtr m_result;
  render::ViewSetPtr m_views;     // shown
  render::ViewRequest m_request;  // what the views should show (View > Fix colour range too)
  bool m_refix = false;           // fix the ranges again once views of a new normalization arrive
  EvaluationRunner* m_runner = nullptr;
  // The newest background preparation: its ticket, result and what to do when it is ready;
  // and the last one delivered, kept so `then` finds it through canShow().
  quint64 m_ticket = 0;
  ResultPtr m_pendingResult;
  std::function<void()> m_pendingThen;
  std::weak_ptr<const EvaluationResult> m_preparedFor;
  render::ViewSetPtr m_prepared;
  render::HeatmapStyle m_style;
  HeatmapView* m_synced;
  HeatmapView* m_expected;
  HeatmapView* m_difference;
  std::vector<HeatmapView*> m_ranks;
  QGridLayout* m_rankGrid;
  bool m_shownRanksScheduled = false;
  // Counts show(): a rank task's maps for views no longer shown are dropped.
  quint64 m_viewsShown = 0;
  // The ranks whose maps a task makes for the views shown.
  std::set<int> m_ranksPreparing;
  QGridLayout* m_top = nullptr;  // synced | expected over difference, or all stacked
  Arrangement m_arrangement = Arrangement::SideBySide;
  int m_rankColumns = kMaxRankColumns;
  QLabel* m_rankTitle;
};

}  // namespace shardlens::ui

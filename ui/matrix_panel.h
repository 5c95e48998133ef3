#pragma once
// The centre of the window: the synced (reported), expected and difference heatmaps side by
// side, and every rank's matrix as small multiples sharing one colour range.
#include <QLabel>
#include <QWidget>
#include <optional>
#include <vector>

#include "ui/cell_info.h"
#include "ui/evaluation_runner.h"
#include "ui/heatmap_view.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_source.h"

class QGridLayout;

namespace shardlens::ui {

class MatrixPanel : public QWidget {
  Q_OBJECT
 public:
  explicit MatrixPanel(QWidget* parent = nullptr);

  void setResult(ResultPtr result);
  void setOptions(const render::MatrixOptions& matrix, const render::HeatmapStyle& style);
  const ResultPtr& result() const { return m_result; }

  HeatmapView* syncedView() const { return m_synced; }
  HeatmapView* expectedView() const { return m_expected; }
  HeatmapView* differenceView() const { return m_difference; }
  const std::vector<HeatmapView*>& rankViews() const { return m_ranks; }
  std::vector<HeatmapView*> allViews() const;
  void repaintAll();  // synchronous repaint of every view (benchmarks)
  // A fixed colour range: the ranges shown now (matrices, difference, ranks) are kept while
  // the epoch steps or the scenario changes, so colours compare; off: each result its own.
  void setFixedRange(bool on);
  bool fixedRange() const { return m_fixed.has_value(); }
  // The ranges for the figure set: the fixed ones, else none (each figure its own).
  render::FigureSetOptions figureRanges() const;

 signals:
  void cellActivated(const shardlens::ui::CellRef& cell);
  void viewCreated(shardlens::ui::HeatmapView* view);  // rank views come and go with W

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void fitHeights();
  void rebuild();
  void ensureRankViews(int world);
  void wire(HeatmapView* view, ViewKind kind, int rank);
  render::HeatmapStyle compactStyle() const;

  struct Ranges {
    double matrices = 0, difference = 0, ranks = 0;
  };
  Ranges m_current;               // of the result shown, before any fixing
  std::optional<Ranges> m_fixed;  // View > Fix colour range

  ResultPtr m_result;
  render::MatrixOptions m_matrix;
  render::HeatmapStyle m_style;
  HeatmapView* m_synced;
  HeatmapView* m_expected;
  HeatmapView* m_difference;
  std::vector<HeatmapView*> m_ranks;
  QGridLayout* m_rankGrid;
  QGridLayout* m_top = nullptr;  // synced | expected over difference
  QLabel* m_rankTitle;
};

}  // namespace shardlens::ui

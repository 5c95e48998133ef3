#pragma once
// One heatmap as a widget: painted from a cached one-pixel-per-cell image, with wheel zoom
// around the cursor, drag to pan, double-click to reset, hover highlight and tooltips.
// The keyboard does the same: Tab focuses a view, arrows / Page / Home / End move a cell
// cursor (the view pans to keep it shown, its tooltip follows), Enter or Space clicks the
// cell, + and - zoom around it, 0 resets the zoom, Esc drops the cursor.
#include <QImage>
#include <QWidget>
#include <functional>
#include <memory>
#include <optional>

#include "ui/render/heatmap_data.h"
#include "ui/render/heatmap_geometry.h"

namespace shardlens::ui {

class HeatmapView : public QWidget {
  Q_OBJECT
 public:
  // Tooltip text for a cell (display positions); col -1 asks about the row-sum column.
  using TooltipProvider = std::function<QString(int row, int col)>;

  explicit HeatmapView(QWidget* parent = nullptr);

  void setData(render::HeatmapData data);
  // Shares prepared data (the background job's views) without copying it.
  void setData(std::shared_ptr<const render::HeatmapData> data);
  void setStyle(const render::HeatmapStyle& style);
  const render::HeatmapData& data() const { return *m_data; }
  const std::shared_ptr<const render::HeatmapData>& sharedData() const { return m_data; }
  const render::HeatmapStyle& style() const { return m_style; }
  const render::HeatmapViewport& viewport() const { return m_view; }
  const render::HeatmapLayout& layoutRects() const { return m_layout; }
  void setTooltipProvider(TooltipProvider provider) { m_tooltip = std::move(provider); }
  void resetZoom();
  // The highlighted cell: under the mouse, or the keyboard's cursor.
  std::optional<render::Cell> currentCell() const { return m_hover; }
  // Puts the cursor on the cell of classes (trueClass, predClass) wherever the class order
  // shows it, zoomed in until the cell is readable (a pair chosen in the Most confused dock).
  void focusClasses(int trueClass, int predClass);

  // The smallest grid a view is given (pixels a side), the small multiples' smaller: 11 and
  // 8 px a cell at 10 classes, and "Predicted" and "True" whole along the axes.
  static constexpr int kMinGrid = 110;
  static constexpr int kMinCompactGrid = 80;

  // Height at which the square grid is as wide as `width` allows; more height is wasted.
  int idealHeight(int width) const;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void cellClicked(int row, int col);  // display positions
  void exportRequested();              // context menu: export this view

 protected:
  bool event(QEvent* e) override;
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void leaveEvent(QEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;

 private:
  void relayout();
  void moveCursorTo(const render::Cell& cell);
  // Layout sizes of the data in the style, with class names or numbers: measured once per
  // data and style, since the panel asks for every view's ideal height on each resize.
  const render::LayoutMetrics& metrics(bool indexLabels) const;
  // The one-pixel-per-cell image, built the first time cells are a pixel or larger.
  const QImage& cellImage();

  std::shared_ptr<const render::HeatmapData> m_data;
  render::HeatmapStyle m_style;
  mutable std::optional<render::LayoutMetrics> m_metrics[2];  // by indexLabels
  QImage m_image;            // null until needed; dropped when the data or colours change
  quint64 m_generation = 0;  // of the data and colours the images are built from
  QImage m_pooled;           // for cells below a pixel; keyed by what it was built for
  QString m_pooledKey;
  render::HeatmapLayout m_layout;
  render::HeatmapViewport m_view;
  std::optional<render::Cell> m_hover;
  bool m_keyboardCursor = false;  // m_hover was set by a key: the mouse leaving keeps it
  std::optional<QPointF> m_dragFrom;
  bool m_dragged = false;
  TooltipProvider m_tooltip;
};

}  // namespace shardlens::ui

#pragma once
// The shard strip: one lane per rank over the dataset's indices, coloured where that rank
// evaluates them; padding duplicates hatched; then a lane of never-evaluated samples and
// one of samples evaluated more than once. Follows the epoch as the settings change.
#include <QImage>
#include <QWidget>

#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

QColor rankColor(int rank);

class ShardStrip : public QWidget {
  Q_OBJECT
 public:
  explicit ShardStrip(QWidget* parent = nullptr);
  void setResult(const ResultPtr& result);
  // "Shard strip — dataset index 0 … N →   epoch 2, shuffled …": the epoch shown.
  QString headerText() const;
  // The header as drawn in `width` pixels: one line when it fits, else broken between its
  // parts (what is laid out, the epoch, the hatching's key) so nothing is clipped.
  QStringList headerLines(int width) const;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  // Lanes of the result shown (W + 2), or 6 before any.
  int laneCount() const { return m_lanes.isNull() ? 6 : m_lanes.height(); }
  // The strip's lane area, for tests and tooltips: lane L spans its L-th row.
  QRectF lanesRect() const;
  // Lane and bucket under a point; lane W is "never", W + 1 "more than once".
  bool hit(const QPoint& p, int* lane, int* bucket) const;

 signals:
  // The header took another number of lines (a narrower strip): the height it needs changed.
  void heightHintChanged();

 protected:
  bool event(QEvent* e) override;
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

 private:
  double laneHeight() const;
  int headerHeight() const;  // at the strip's width
  QStringList headerParts() const;
  QString tooltipAt(const QPoint& p) const;

  ResultPtr m_result;
  QImage m_lanes;             // buckets x (W + 2), one row per lane
  int m_headerLineCount = 1;  // at the last resize
};

}  // namespace shardlens::ui

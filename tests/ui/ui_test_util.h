#pragma once
// Helpers shared by the Qt Test suites.
#include <QImage>
#include <QWidget>

#include "ui/render/heatmap_painter.h"

namespace shardlens::ui::test {

// Pixels of the mismatch fill in a rendered view: the colour half of the row-sum marker.
inline int mismatchPixels(QWidget* view) {
  const QImage img = view->grab().toImage();
  int n = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x)
      n += (img.pixel(x, y) & 0xffffff) == (render::kMismatchFill & 0xffffff);
  return n;
}

}  // namespace shardlens::ui::test

#pragma once
// Helpers shared by the Qt Test suites.
#include <QImage>
#include <QWidget>

#include "ui/main_window.h"
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

// Errors go to lastError() instead of a dialog, at a size that shows every view.
inline void showQuietly(MainWindow& w) {
  w.setErrorDialogs(false);
  w.resize(1400, 900);
  w.show();
}

}  // namespace shardlens::ui::test

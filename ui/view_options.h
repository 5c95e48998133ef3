#pragma once
// The toolbar's display settings, persisted with QSettings.
#include <QSettings>

#include "ui/render/heatmap_data.h"
#include "ui/render/heatmap_source.h"

namespace shardlens::ui {

struct ViewOptions {
  render::MatrixOptions matrix;
  render::HeatmapStyle style;

  void save(QSettings& s) const;
  static ViewOptions load(const QSettings& s);
};

}  // namespace shardlens::ui

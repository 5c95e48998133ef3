#pragma once
// The toolbar's display settings (kept between sessions by Settings, ui/settings/settings.h).
#include "ui/render/heatmap_data.h"
#include "ui/render/heatmap_source.h"

namespace shardlens::ui {

struct ViewOptions {
  render::MatrixOptions matrix;
  render::HeatmapStyle style;
};

}  // namespace shardlens::ui

#pragma once
// Colour maps for heatmaps. Sequential maps are perceptually uniform (viridis is the default;
// cividis stays readable with colour-vision deficiency; grey prints well). Signed data (the
// difference matrix) uses a blue-white-red diverging map whatever the choice.
#include <QColor>
#include <QString>
#include <QStringList>
#include <array>

namespace shardlens::render {

enum class Colormap { Viridis, Cividis, Magma, Grey };

QString colormapName(Colormap map);           // "viridis", ...
Colormap parseColormap(const QString& name);  // unknown names give viridis
QStringList colormapNames();

// 256-entry lookup table; t in [0, 1] maps to entry round(t * 255).
const std::array<QRgb, 256>& colormapTable(Colormap map);
QRgb colormapColor(Colormap map, double t);
// t in [-1, 1]: blue (negative) through white (0) to red (positive).
QRgb divergingColor(double t);
// Black or white, whichever reads better on the background.
QColor textColorOn(QRgb background);

}  // namespace shardlens::render

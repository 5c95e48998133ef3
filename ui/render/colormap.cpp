#include "ui/render/colormap.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace shardlens::render {
namespace {

// Eleven evenly spaced anchors per map (t = 0, 0.1, ..., 1), interpolated linearly in RGB.
// Ten segments keep the interpolation error below what the eye separates on a heatmap.
using Anchors = std::array<QRgb, 11>;

constexpr Anchors kViridis = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                              0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
constexpr Anchors kCividis = {0x00224e, 0x123570, 0x3b496c, 0x575d6d, 0x707173, 0x8a8779,
                              0xa69d75, 0xc4b56c, 0xe4cf5b, 0xf6e047, 0xfee838};
constexpr Anchors kMagma = {0x000004, 0x140e36, 0x3b0f70, 0x641a80, 0x8c2981, 0xb73779,
                            0xde4968, 0xf7705c, 0xfe9f6d, 0xfecf92, 0xfcfdbf};
// Grey runs from white (zero) to near black so empty cells vanish on paper.
constexpr Anchors kGrey = {0xffffff, 0xe6e6e6, 0xcccccc, 0xb3b3b3, 0x999999, 0x808080,
                           0x666666, 0x4d4d4d, 0x333333, 0x1a1a1a, 0x0a0a0a};
constexpr Anchors kDiverging = {0x2166ac, 0x3a84bb, 0x6aa6cd, 0xa5cbe2, 0xd8e7f1, 0xf7f7f7,
                                0xf9dccb, 0xf1b096, 0xdc7a62, 0xc0433a, 0xb2182b};

QRgb interpolate(const Anchors& a, double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 10.0;
  const int i = std::min(9, static_cast<int>(t));
  const double f = t - i;
  auto mix = [f](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * f)); };
  const QRgb p = a[static_cast<size_t>(i)], q = a[static_cast<size_t>(i + 1)];
  return qRgb(mix(qRed(p), qRed(q)), mix(qGreen(p), qGreen(q)), mix(qBlue(p), qBlue(q)));
}

std::array<QRgb, 256> buildTable(const Anchors& a) {
  std::array<QRgb, 256> table{};
  for (int k = 0; k < 256; ++k) table[static_cast<size_t>(k)] = interpolate(a, k / 255.0);
  return table;
}

}  // namespace

QString colormapName(Colormap map) {
  switch (map) {
    case Colormap::Cividis:
      return QStringLiteral("cividis");
    case Colormap::Magma:
      return QStringLiteral("magma");
    case Colormap::Grey:
      return QStringLiteral("grey");
    case Colormap::Viridis:
      break;
  }
  return QStringLiteral("viridis");
}

Colormap parseColormap(const QString& name) {
  const QString n = name.trimmed().toLower();
  if (n == QLatin1String("cividis")) return Colormap::Cividis;
  if (n == QLatin1String("magma")) return Colormap::Magma;
  if (n == QLatin1String("grey") || n == QLatin1String("gray")) return Colormap::Grey;
  return Colormap::Viridis;
}

QStringList colormapNames() {
  return {"viridis", "cividis", "magma", "grey"};
}

const std::array<QRgb, 256>& colormapTable(Colormap map) {
  static const std::array<std::array<QRgb, 256>, 4> tables = {
      buildTable(kViridis), buildTable(kCividis), buildTable(kMagma), buildTable(kGrey)};
  return tables[static_cast<size_t>(map)];
}

QRgb colormapColor(Colormap map, double t) {
  if (!std::isfinite(t)) t = 0;
  const int k = static_cast<int>(std::lround(std::clamp(t, 0.0, 1.0) * 255.0));
  return colormapTable(map)[static_cast<size_t>(k)];
}

QRgb divergingColor(double t) {
  return interpolate(kDiverging, (t + 1.0) / 2.0);
}

QColor textColorOn(QRgb bg) {
  // Relative luminance (sRGB weights, no gamma: close enough to pick black or white).
  const double y = 0.2126 * qRed(bg) + 0.7152 * qGreen(bg) + 0.0722 * qBlue(bg);
  return y > 140 ? QColor(Qt::black) : QColor(Qt::white);
}

}  // namespace shardlens::render

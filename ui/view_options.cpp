#include "ui/view_options.h"

#include <exception>

namespace shardlens::ui {

void ViewOptions::save(QSettings& s) const {
  s.setValue(QStringLiteral("view/normalization"),
             QString::fromStdString(to_string(matrix.normalization)));
  s.setValue(QStringLiteral("view/order"), render::classOrderName(matrix.order));
  s.setValue(QStringLiteral("view/colormap"), render::colormapName(style.colormap));
  s.setValue(QStringLiteral("view/log"), style.logScale);
  s.setValue(QStringLiteral("view/values"), style.showValues);
}

ViewOptions ViewOptions::load(const QSettings& s) {
  ViewOptions o;
  try {
    o.matrix.normalization =
        parse_normalization(s.value(QStringLiteral("view/normalization"), QStringLiteral("none"))
                                .toString()
                                .toStdString());
  } catch (const std::exception&) {
    o.matrix.normalization = Normalization::None;  // a stale settings file must not stop startup
  }
  o.matrix.order = render::parseClassOrder(s.value(QStringLiteral("view/order")).toString());
  o.style.colormap = render::parseColormap(s.value(QStringLiteral("view/colormap")).toString());
  o.style.logScale = s.value(QStringLiteral("view/log"), false).toBool();
  o.style.showValues = s.value(QStringLiteral("view/values"), true).toBool();
  return o;
}

}  // namespace shardlens::ui

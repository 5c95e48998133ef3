#include "ui/panels/display_toolbar.h"

#include <QAction>
#include <QComboBox>
#include <QLabel>

namespace shardlens::ui {

DisplayToolbar::DisplayToolbar(QWidget* parent) : QToolBar(tr("Display"), parent) {
  setObjectName(QStringLiteral("displayToolbar"));
  const auto box = [this](const char* name, const QString& label, const QStringList& items) {
    addWidget(new QLabel(label + QStringLiteral(" "), this));
    auto* c = new QComboBox(this);
    c->setObjectName(QLatin1String(name));
    c->addItems(items);
    addWidget(c);
    addSeparator();
    return c;
  };
  m_normalization = box("normalization", tr("Normalize"), {"none", "true", "pred", "all"});
  m_normalization->setToolTip(
      tr("torchmetrics normalize: rows (true), columns (pred) or total (all)"));
  m_colormap = box("colormap", tr("Colours"), render::colormapNames());
  m_order = box("classOrder", tr("Class order"), render::classOrderNames());
  m_order->setToolTip(
      tr("index, name, count (most frequent first), error (wrong rows first), confusion (the "
         "most confused pairs first, each pair's classes side by side)"));
  m_scale = box("colourScale", tr("Scale"), render::colourScaleNames());
  m_scale->setToolTip(
      tr("Colour scale: auto is log for pixel and token counts (they span orders of "
         "magnitude) and linear otherwise; linear or log for every view"));
  // The View menu's Log scale (Ctrl+L): checked, log for every view; unchecked, linear.
  m_log = new QAction(tr("Log scale"), this);
  m_log->setCheckable(true);
  m_log->setShortcut(QKeySequence(tr("Ctrl+L")));
  m_values = addAction(tr("Values on cells"));
  m_values->setCheckable(true);
  m_values->setShortcut(QKeySequence(tr("Ctrl+Shift+V")));
  // Shared range: the colours of two epochs (or of a figure and the next) mean the same.
  m_fixed = new QAction(tr("&Fix colour range"), this);
  m_fixed->setObjectName(QStringLiteral("fixColourRange"));
  m_fixed->setCheckable(true);
  m_fixed->setShortcut(QKeySequence(tr("Ctrl+Shift+R")));
  m_fixed->setToolTip(
      tr("Keep the current colour ranges while stepping epochs or changing the "
         "scenario, so colours compare; figure sets use them too"));
  addAction(m_fixed);
  const auto apply = [this] {
    ViewOptions o = m_options;
    o.matrix.normalization = parse_normalization(m_normalization->currentText().toStdString());
    o.style.colormap = render::parseColormap(m_colormap->currentText());
    o.matrix.order = render::parseClassOrder(m_order->currentText());
    o.style.scale = render::parseColourScale(m_scale->currentText());
    {
      const QSignalBlocker quiet(m_log);
      m_log->setChecked(o.style.scale == render::ColourScale::Log);
    }
    o.style.showValues = m_values->isChecked();
    m_options = o;
    emit optionsChanged(o);
  };
  connect(m_normalization, &QComboBox::currentIndexChanged, this, apply);
  connect(m_colormap, &QComboBox::currentIndexChanged, this, apply);
  connect(m_order, &QComboBox::currentIndexChanged, this, apply);
  connect(m_scale, &QComboBox::currentIndexChanged, this, apply);
  connect(m_log, &QAction::toggled, this, [this](bool log) {
    m_scale->setCurrentText(
        render::colourScaleName(log ? render::ColourScale::Log : render::ColourScale::Linear));
  });
  connect(m_values, &QAction::toggled, this, apply);
}

void DisplayToolbar::setOptions(const ViewOptions& o) {
  m_options = o;
  // Reflect in the controls without re-entering apply.
  const QSignalBlocker b1(m_normalization), b2(m_colormap), b3(m_order), b4(m_log), b5(m_values),
      b6(m_scale);
  m_normalization->setCurrentText(QString::fromStdString(to_string(o.matrix.normalization)));
  m_colormap->setCurrentText(render::colormapName(o.style.colormap));
  m_order->setCurrentText(render::classOrderName(o.matrix.order));
  m_scale->setCurrentText(render::colourScaleName(o.style.scale));
  m_log->setChecked(o.style.scale == render::ColourScale::Log);
  m_values->setChecked(o.style.showValues);
}

}  // namespace shardlens::ui

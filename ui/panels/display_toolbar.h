#pragma once
// The display toolbar: normalization, colours, class order, colour scale, values on cells and
// the fixed colour range. It shows the ViewOptions it is given and says when the user
// changes them; the window keeps them (Settings) and applies them to the views.
#include <QToolBar>

#include "ui/settings/view_options.h"

class QAction;
class QComboBox;

namespace shardlens::ui {

class DisplayToolbar : public QToolBar {
  Q_OBJECT
 public:
  explicit DisplayToolbar(QWidget* parent = nullptr);

  // Shows `options` without emitting optionsChanged().
  void setOptions(const ViewOptions& options);
  // For the View menu too.
  QAction* logAction() const { return m_log; }
  QAction* valuesAction() const { return m_values; }
  QAction* fixedRangeAction() const { return m_fixed; }

 signals:
  void optionsChanged(const shardlens::ui::ViewOptions& options);

 private:
  ViewOptions m_options;
  QComboBox* m_normalization;
  QComboBox* m_colormap;
  QComboBox* m_order;
  QComboBox* m_scale;
  QAction* m_log;
  QAction* m_values;
  QAction* m_fixed;
};

}  // namespace shardlens::ui

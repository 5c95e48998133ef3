#include "ui/panels/setting_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <algorithm>
#include <limits>

namespace shardlens::ui {
namespace {

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

// A spin box holds an int: the row's range, cut to what an int can show.
int clampToInt(int64_t v) {
  return int(
      std::clamp<int64_t>(v, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

bool editableCombo(const ScenarioSetting& s) {
  return s.kind == SettingKind::Text && !s.suggestions.empty();
}

QComboBox* makeCombo(const ScenarioSetting& s, QWidget* parent) {
  auto* c = new QComboBox(parent);
  if (s.kind == SettingKind::Choice) {
    for (const SettingChoice& choice : s.choices) {
      c->addItem(q(choice.name));
      c->setItemData(c->count() - 1, q(choice.help), Qt::ToolTipRole);
    }
  } else {
    for (const std::string& v : s.suggestions) c->addItem(q(v));
    c->setEditable(true);
    c->setInsertPolicy(QComboBox::NoInsert);
  }
  c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  c->setMinimumContentsLength(8);
  return c;
}

QSpinBox* makeSpin(const ScenarioSetting& s, QWidget* parent) {
  auto* spin = new QSpinBox(parent);
  spin->setRange(clampToInt(s.min), clampToInt(s.max));
  spin->setKeyboardTracking(false);  // typing "128" evaluates once, not for 1, 12 and 128
  if (!s.gui_min_text.empty()) spin->setSpecialValueText(q(s.gui_min_text));
  return spin;
}

void setComboText(QComboBox* c, const std::string& text) {
  const int i = c->findText(q(text));
  if (i >= 0)
    c->setCurrentIndex(i);
  else if (c->isEditable())
    c->setEditText(q(text));
}

}  // namespace

QString settingObjectName(const ScenarioSetting& s) {
  QString out;
  bool upper = false;
  for (char ch : s.key) {
    if (ch == '_') {
      upper = true;
      continue;
    }
    out += upper ? QChar(ch).toUpper() : QChar(ch);
    upper = false;
  }
  return out;
}

QString settingToolTip(const ScenarioSetting& s) {
  return q(setting_help(s));
}

QWidget* makeSettingControl(const ScenarioSetting& s, QWidget* parent) {
  QWidget* w = nullptr;
  switch (s.kind) {
    case SettingKind::Int:
      w = makeSpin(s, parent);
      break;
    case SettingKind::Bool:
      w = new QCheckBox(q(s.gui_label), parent);
      break;
    case SettingKind::Choice:
      w = makeCombo(s, parent);
      break;
    case SettingKind::Text:
    case SettingKind::IntList:
    case SettingKind::NumberList:
      if (editableCombo(s)) {
        w = makeCombo(s, parent);
      } else {
        auto* edit = new QLineEdit(parent);
        edit->setPlaceholderText(q(s.gui_placeholder));
        w = edit;
      }
      break;
  }
  w->setObjectName(settingObjectName(s));
  w->setToolTip(settingToolTip(s));
  return w;
}

void showSetting(QWidget* control, const ScenarioSetting& s, const Scenario& scenario) {
  const QSignalBlocker block(control);
  if (auto* spin = qobject_cast<QSpinBox*>(control)) {
    spin->setValue(clampToInt(s.get_int(scenario)));
  } else if (auto* check = qobject_cast<QCheckBox*>(control)) {
    check->setChecked(s.get_bool(scenario));
  } else if (auto* combo = qobject_cast<QComboBox*>(control)) {
    setComboText(combo, setting_text(s, scenario));
    if (combo->lineEdit()) combo->lineEdit()->setCursorPosition(0);
  } else if (auto* edit = qobject_cast<QLineEdit*>(control)) {
    // The placeholder says what an empty field means ("all"), so that value shows empty.
    const std::string text = setting_text(s, scenario);
    edit->setText(text == s.gui_placeholder ? QString() : q(text));
  }
}

void readSetting(QWidget* control, const ScenarioSetting& s, Scenario& scenario) {
  if (auto* spin = qobject_cast<QSpinBox*>(control)) {
    s.set_int(scenario, spin->value());
  } else if (auto* check = qobject_cast<QCheckBox*>(control)) {
    s.set_bool(scenario, check->isChecked());
  } else if (auto* combo = qobject_cast<QComboBox*>(control)) {
    set_setting_text(s, scenario, combo->currentText().trimmed().toStdString());
  } else if (auto* edit = qobject_cast<QLineEdit*>(control)) {
    set_setting_text(s, scenario, edit->text().trimmed().toStdString());
  }
}

void onSettingEdited(QWidget* control, QObject* context, const std::function<void()>& edited) {
  if (auto* spin = qobject_cast<QSpinBox*>(control)) {
    QObject::connect(spin, &QSpinBox::valueChanged, context, [edited] { edited(); });
  } else if (auto* check = qobject_cast<QCheckBox*>(control)) {
    QObject::connect(check, &QCheckBox::toggled, context, [edited] { edited(); });
  } else if (auto* combo = qobject_cast<QComboBox*>(control)) {
    QObject::connect(combo, &QComboBox::activated, context, [edited] { edited(); });
    if (combo->lineEdit())
      QObject::connect(combo->lineEdit(), &QLineEdit::editingFinished, context,
                       [edited] { edited(); });
  } else if (auto* edit = qobject_cast<QLineEdit*>(control)) {
    QObject::connect(edit, &QLineEdit::editingFinished, context, [edited] { edited(); });
  }
}

}  // namespace shardlens::ui

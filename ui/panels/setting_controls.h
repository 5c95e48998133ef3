#pragma once
// One control per row of the scenario setting table (core/evaluation/scenario_settings.h):
// its kind picks the widget (spin box, check box, combo box, line edit), the row gives the
// object name, range, choices and tooltip, and its accessors move values between the
// control and a Scenario. The scenario panel lays these out; nothing here knows a setting.
#include <QString>
#include <functional>

#include "core/evaluation/scenario_settings.h"

class QObject;
class QWidget;

namespace shardlens::ui {

// world_size -> worldSize: the name tests and style sheets find the control by.
QString settingObjectName(const ScenarioSetting& s);
// The tooltip: the row's help with every choice, as --help says it.
QString settingToolTip(const ScenarioSetting& s);

QWidget* makeSettingControl(const ScenarioSetting& s, QWidget* parent);
// Shows the scenario's value without emitting the control's edit signals.
void showSetting(QWidget* control, const ScenarioSetting& s, const Scenario& scenario);
// Writes the control's value into the scenario; throws InputError for text it cannot parse.
void readSetting(QWidget* control, const ScenarioSetting& s, Scenario& scenario);
// Calls `edited` each time the user finishes an edit of the control.
void onSettingEdited(QWidget* control, QObject* context, const std::function<void()>& edited);

}  // namespace shardlens::ui

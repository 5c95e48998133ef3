#pragma once
// Every engine setting as a control, plus the lesson presets with their explanation. The
// controls, their labels and tooltips are made from the setting table
// (core/evaluation/scenario_settings.h). Each edit updates the panel's scenario and emits
// changed() so every view follows live.
#include <QTimer>
#include <QWidget>
#include <map>
#include <optional>
#include <string>

#include "core/evaluation/scenario.h"

class QComboBox;
class QLayout;
class QLabel;
class QToolButton;

namespace shardlens::ui {

class LessonModel;

class ScenarioPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ScenarioPanel(LessonModel* lessons, QWidget* parent = nullptr);

  // Shows a scenario without emitting changed().
  void setScenario(const Scenario& s);
  const Scenario& scenario() const { return m_scenario; }
  void selectLesson(int row);  // loads it and emits changed()
  bool playing() const;
  // Whether the scenario names a lesson but its settings (the epoch aside) were edited.
  bool lessonModified() const;
  // The scenario of the simulation on screen: the "(modified: ...)" note lists what took
  // effect there, never a value that was refused.
  void setShownScenario(const Scenario& s);
  void setPlaying(bool on);
  void stepEpoch(int delta);

 signals:
  void changed(const shardlens::Scenario& s);
  void error(const QString& message);

 private:
  void updatePredictorChoices();  // model:reference for Fashion-MNIST datasets
  void build();
  void wire();
  void commit();  // emit changed() for the current m_scenario
  void applyLesson(int row);
  void updateLessonText();
  const Scenario& effectiveScenario() const;  // m_shown when it is this scenario's
  QWidget* lessonsBox();
  QLayout* epochRow(QWidget* epoch, QWidget* parent);  // the epoch with step and play

  LessonModel* m_lessons;
  Scenario m_scenario;
  std::optional<Scenario> m_shown;  // setShownScenario()
  bool m_loading = false;
  QTimer m_play;

  QComboBox* m_lesson = nullptr;
  QLabel* m_lessonText = nullptr;
  QToolButton* m_playButton = nullptr;
  // One control per setting of the table (ui/panels/setting_controls.h), by the setting's key.
  std::map<std::string, QWidget*> m_controls;
  template <class W>
  W* control(const std::string& key) const {
    return static_cast<W*>(m_controls.at(key));
  }
};

}  // namespace shardlens::ui

#pragma once
// Every engine setting as a control, plus the lesson presets with their explanation. Each
// edit updates the panel's scenario and emits changed() so every view follows live.
#include <QTimer>
#include <QWidget>

#include "core/evaluation/scenario.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
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
  QWidget* lessonsBox();

  LessonModel* m_lessons;
  Scenario m_scenario;
  bool m_loading = false;
  QTimer m_play;

  QComboBox* m_lesson = nullptr;
  QLabel* m_lessonText = nullptr;
  QComboBox* m_dataset = nullptr;
  QComboBox* m_predictor = nullptr;
  QSpinBox* m_world = nullptr;
  QSpinBox* m_batch = nullptr;
  QComboBox* m_sampler = nullptr;
  QCheckBox* m_shuffle = nullptr;
  QSpinBox* m_seed = nullptr;
  QSpinBox* m_epoch = nullptr;
  QToolButton* m_playButton = nullptr;
  QCheckBox* m_samplerDropLast = nullptr;
  QCheckBox* m_loaderDropLast = nullptr;
  QLineEdit* m_limit = nullptr;
  QLineEdit* m_rankSeeds = nullptr;
  QCheckBox* m_sanityLeak = nullptr;
  QSpinBox* m_sanitySteps = nullptr;
  QComboBox* m_sync = nullptr;
  QComboBox* m_dtype = nullptr;
  QComboBox* m_torch = nullptr;
  QSpinBox* m_ignore = nullptr;
  QCheckBox* m_splitBatches = nullptr;
  QCheckBox* m_evenBatches = nullptr;
  QComboBox* m_inner = nullptr;
  QComboBox* m_accelerateInput = nullptr;
  QComboBox* m_accelerateShuffle = nullptr;
  QSpinBox* m_validations = nullptr;
};

}  // namespace shardlens::ui

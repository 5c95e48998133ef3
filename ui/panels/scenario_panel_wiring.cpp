// ScenarioPanel: controls <-> Scenario. Each control writes its setting through the setting
// table and commits; text fields are parsed by the table's parsers and the scenario is
// validated by the one validate(), so the GUI accepts exactly what files and the CLI accept,
// and a bad value is reported instead of silently ignored.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <exception>

#include "core/vocabulary/types.h"
#include "ui/models/lesson_model.h"
#include "ui/panels/scenario_panel.h"
#include "ui/panels/setting_controls.h"
#include "ui/render/shown_text.h"

namespace shardlens::ui {

void ScenarioPanel::wire() {
  // Each control writes its setting through the table; commit() then hands the scenario to
  // the window. A few settings move others along, after the generic write.
  for (const ScenarioSetting& row : scenario_settings()) {
    if (!m_controls.count(row.key)) continue;
    QWidget* control = m_controls.at(row.key);
    onSettingEdited(control, this, [this, control, &row] {
      if (m_loading) return;
      try {
        readSetting(control, row, m_scenario);
        if (row.key == "dataset") updatePredictorChoices();
        if (row.key == "world_size") {
          // Per-rank seeds follow the world size so changing it never makes the scenario
          // invalid.
          auto& seeds = m_scenario.sampler.rank_seeds;
          if (!seeds.empty()) {
            seeds.resize(size_t(m_scenario.sampler.world_size), m_scenario.sampler.seed);
            showSetting(m_controls.at("rank_seeds"), scenario_setting("rank_seeds"), m_scenario);
          }
        }
        validate(m_scenario);
        commit();
      } catch (const std::exception& e) {
        emit error(QString::fromStdString(e.what()));
      }
    });
  }
  connect(m_lesson, &QComboBox::activated, this, [this](int row) { applyLesson(row); });
  connect(m_lesson, &QComboBox::currentIndexChanged, this, [this] { updateLessonText(); });
  connect(m_playButton, &QToolButton::toggled, this, [this](bool on) { setPlaying(on); });
}

namespace {

// Whether `s` still has the lesson's settings. The epoch does not count: stepping it is
// what several lessons ask for.
bool sameSettings(Scenario s, Scenario lesson) {
  for (Scenario* x : {&s, &lesson}) {
    x->name.clear();
    x->title.clear();
    x->description.clear();
    x->sampler.epoch = 0;
  }
  return to_json(s) == to_json(lesson);
}

}  // namespace

void ScenarioPanel::commit() {
  // A lesson whose settings were edited is no longer the lesson: its title says so (the
  // window, the figures) and its text no longer claims to describe what is shown.
  const int row = m_lessons ? m_lessons->findByName(QString::fromStdString(m_scenario.name)) : -1;
  if (const Lesson* l = m_lessons ? m_lessons->lesson(row) : nullptr) {
    const bool modified = !sameSettings(m_scenario, l->scenario);
    m_scenario.title = modified ? l->scenario.title + " (modified)" : l->scenario.title;
    m_scenario.description = modified ? std::string() : l->scenario.description;
  }
  updateLessonText();
  emit changed(m_scenario);
}

void ScenarioPanel::updatePredictorChoices() {
  // The reference model was trained on Fashion-MNIST: offered for it, and only for it.
  static const QString kReference = QStringLiteral("model:reference");
  const bool fashion = m_scenario.dataset.rfind("fashion-mnist", 0) == 0;
  auto* predictor = control<QComboBox>("predictor");
  const int at = predictor->findText(kReference);
  const QSignalBlocker block(predictor);
  const QString text = predictor->currentText();
  if (fashion && at < 0) {
    predictor->insertItem(0, kReference);
    predictor->setItemData(0,
                           tr("The Fashion-MNIST reference model, run once on every "
                              "image (LibTorch) and cached"),
                           Qt::ToolTipRole);
  } else if (!fashion && at >= 0 && text != kReference) {
    predictor->removeItem(at);
  }
  if (predictor->currentText() != text) {
    const int i = predictor->findText(text);
    if (i >= 0)
      predictor->setCurrentIndex(i);
    else
      predictor->setEditText(text);
  }
}

bool ScenarioPanel::lessonModified() const {
  const int row = m_lessons ? m_lessons->findByName(QString::fromStdString(m_scenario.name)) : -1;
  const Lesson* l = m_lessons ? m_lessons->lesson(row) : nullptr;
  return l && !sameSettings(m_scenario, l->scenario);
}

void ScenarioPanel::setScenario(const Scenario& s) {
  m_loading = true;
  m_scenario = s;
  for (const ScenarioSetting& row : scenario_settings()) {
    if (!m_controls.count(row.key)) continue;
    // The predictor's choices depend on the dataset, which comes first in the table.
    if (row.key == "predictor") updatePredictorChoices();
    showSetting(m_controls.at(row.key), row, s);
  }
  // A scenario that is no lesson leaves the lesson box empty rather than naming another.
  m_lesson->setCurrentIndex(m_lessons ? m_lessons->findByName(QString::fromStdString(s.name)) : -1);
  updateLessonText();
  m_loading = false;
}

void ScenarioPanel::selectLesson(int row) {
  m_lesson->setCurrentIndex(row);
  applyLesson(row);
}

void ScenarioPanel::applyLesson(int row) {
  const Lesson* l = m_lessons ? m_lessons->lesson(row) : nullptr;
  if (!l) return;
  setScenario(l->scenario);
  commit();
}

void ScenarioPanel::updateLessonText() {
  const Lesson* l = m_lessons ? m_lessons->lesson(m_lesson->currentIndex()) : nullptr;
  if (!l) {
    // A custom scenario: its own description, if it has one.
    const QString title = shownText(m_scenario.title);
    const QString text = shownText(m_scenario.description);
    m_lessonText->setText(!m_lessons || m_lessons->rowCount() == 0
                              ? tr("No lessons found.")
                              : tr("Custom scenario%1.%2")
                                    .arg(title.isEmpty() ? QString() : QStringLiteral(": ") + title)
                                    .arg(text.isEmpty() ? QString() : QStringLiteral("\n") + text));
    return;
  }
  // The explanation belongs to the lesson only while its scenario is the one shown.
  const bool current = l->scenario.name == m_scenario.name;
  if (current && lessonModified()) {
    // The explanation stays while a student experiments, marked as the lesson's, with what
    // was changed named.
    QStringList changes;
    for (const ScenarioSetting& row : scenario_settings()) {
      if (row.key == "epoch" || row.gui_label.empty()) continue;
      const std::string was = setting_text(row, l->scenario), now = setting_text(row, m_scenario);
      if (was != now)
        changes << tr("%1 %2 → %3")
                       .arg(QString::fromStdString(row.gui_label),
                            QString::fromStdString(was.empty() ? "(none)" : was),
                            QString::fromStdString(now.empty() ? "(none)" : now));
    }
    m_lessonText->setText(
        tr("(modified: %1) The lesson's explanation below describes its own settings; the "
           "diagnosis describes what is shown. Choose the lesson again to restore them.\n\n%2")
            .arg(changes.join(QStringLiteral(", ")), shownText(l->scenario.description)));
    return;
  }
  m_lessonText->setText(shownText(l->scenario.description) +
                        (current ? QString() : tr("\n(choose it to load)")));
}

}  // namespace shardlens::ui

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
#include <memory>
#include <vector>

#include "core/evaluation/caption.h"
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

// What differs in `s` from the lesson's settings (the epoch aside: stepping it is what
// several lessons ask for), by the one caption policy (core/evaluation/caption.h).
std::vector<SettingChange> changesFromLesson(const Scenario& s, const Lesson& lesson) {
  Scenario x = s;
  x.titled = std::make_shared<const Scenario>(lesson.scenario);
  return changed_settings(x);
}

}  // namespace

void ScenarioPanel::commit() {
  // The title stays the lesson's (or the file's): the captions name the scenario by what
  // changed once its settings are no longer those the title was written for.
  updateLessonText();
  emit changed(m_scenario);
}

void ScenarioPanel::setShownScenario(const Scenario& s) {
  m_shown = s;
  updateLessonText();
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
  return l && !changesFromLesson(m_scenario, *l).empty();
}

const Scenario& ScenarioPanel::effectiveScenario() const {
  // The simulation on screen has what took effect; until the first one, what was committed.
  return m_shown && m_shown->name == m_scenario.name ? *m_shown : m_scenario;
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
  // Settings named as changed are those of the evaluation on screen: a value refused (by
  // validate() or by the simulation) never took effect and is not listed.
  const Scenario& shown = effectiveScenario();
  if (!l) {
    // A custom scenario: its own description, if it has one; once edited, its title says what
    // changed and the description is marked as the file's.
    const QString title = shownText(
        shown.title.empty() && shown.name.empty() ? std::string() : scenario_title(shown));
    const std::vector<SettingChange> changes = changed_settings(shown);
    const QString text = shownText(shown.description);
    const QString described =
        text.isEmpty() || changes.empty()
            ? text
            : tr("(modified: %1) The description below is of the file's own settings.\n%2")
                  .arg(shownText(changes_text(changes)), text);
    m_lessonText->setText(
        !m_lessons || m_lessons->rowCount() == 0
            ? tr("No lessons found.")
            : tr("Custom scenario%1.%2")
                  .arg(title.isEmpty() ? QString() : QStringLiteral(": ") + title)
                  .arg(described.isEmpty() ? QString() : QStringLiteral("\n") + described));
    return;
  }
  // The explanation belongs to the lesson only while its scenario is the one shown.
  const bool current = l->scenario.name == m_scenario.name;
  const std::vector<SettingChange> changes =
      current ? changesFromLesson(shown, *l) : std::vector<SettingChange>{};
  if (!changes.empty()) {
    // The explanation stays while a student experiments, marked as the lesson's, with what
    // was changed named.
    m_lessonText->setText(
        tr("(modified: %1) The lesson's explanation below describes its own settings; the "
           "diagnosis describes what is shown. Choose the lesson again to restore them.\n\n%2")
            .arg(shownText(changes_text(changes)), shownText(l->scenario.description)));
    return;
  }
  m_lessonText->setText(shownText(l->scenario.description) +
                        (current ? QString() : tr("\n(choose it to load)")));
}

}  // namespace shardlens::ui

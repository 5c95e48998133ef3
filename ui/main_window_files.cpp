// Scenario files, the settings kept between sessions, and the About box.
#include <QMessageBox>
#include <QSplitter>
#include <QStatusBar>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/evaluation/caption.h"
#include "core/io/output_text.h"
#include "shardlens/config.h"
#include "ui/controllers/follow_controller.h"
#include "ui/main_window.h"
#include "ui/models/lesson_model.h"
#include "ui/models/recent_files.h"
#include "ui/models/shown_source.h"
#include "ui/panels/scenario_panel.h"
#include "ui/settings/memory_setting.h"
#include "ui/settings/settings.h"

namespace shardlens::ui {

bool MainWindow::openScenario(const QString& path) {
  try {
    const Scenario s = load_scenario_file(path.toStdString());
    m_follow->stop();  // another file opened
    m_source->setScenarioPath(path);
    m_recent->add(path);
    setScenario(s);
    return true;
  } catch (const std::exception& e) {
    showError(QString::fromStdString(e.what()));
    return false;
  }
}

bool MainWindow::saveScenario(const QString& path) {
  try {
    save_scenario_file(m_source->scenario(), path.toStdString());
    m_source->setScenarioPath(path);
    m_recent->add(path);
    updateTitle();
    statusBar()->showMessage(tr("Saved %1").arg(path), 3000);
    return true;
  } catch (const std::exception& e) {
    showError(QString::fromStdString(e.what()));
    return false;
  }
}

bool MainWindow::loadLesson(const QString& name) {
  const int row = m_lessons->findByName(name);
  if (row < 0) {
    showError(tr("No lesson named '%1' in %2").arg(name, LessonModel::defaultDirectory()));
    return false;
  }
  m_source->setScenarioPath(QString());
  m_panel->selectLesson(row);
  return true;
}

void MainWindow::restoreSession() {
  const QString last = Settings::lastScenario();
  if (!last.isEmpty()) {
    try {
      Scenario s = scenario_from_json(nlohmann::json::parse(last.toStdString()), "saved settings");
      // Its title describes it as saved; a lesson's is the lesson's, for the lesson's
      // settings, so an edited lesson restored shows as modified still.
      if (const Lesson* l =
              m_lessons->lesson(m_lessons->findByName(QString::fromStdString(s.name)))) {
        s.title = l->scenario.title;
        s.description = l->scenario.description;
        s.titled = l->scenario.titled;
      } else {
        s.titled = std::make_shared<const Scenario>(s);
      }
      setScenario(s);
      return;
    } catch (const std::exception&) {
      // A stale or broken saved scenario falls back to the seed lesson.
    }
  }
  const bool dialogs = m_errorDialogs;
  m_errorDialogs = false;  // a missing lesson is not worth a dialog at startup
  if (!loadLesson(QStringLiteral("seed-lesson"))) setScenario({});
  m_errorDialogs = dialogs;
}

void MainWindow::readSettings() {
  restoreGeometry(Settings::windowGeometry());
  restoreState(Settings::windowState());
  m_centre->restoreState(Settings::centreSplitter());
  setViewOptions(Settings::viewOptions());
  applyMemoryBudgetSetting();
}

void MainWindow::writeSettings() const {
  Settings::setWindowGeometry(saveGeometry());
  Settings::setWindowState(saveState());
  Settings::setCentreSplitter(m_centre->saveState());
  Settings::setViewOptions(m_options);
  rememberScenario();
}

void MainWindow::rememberScenario() const {
  Settings::setLastScenario(
      QString::fromStdString(json_text(to_json(retitled(m_source->scenario())))));
}

void MainWindow::about() {
  QMessageBox::about(
      this, tr("About ShardLens"),
      tr("<h3>ShardLens %1</h3>"
         "<p>What distributed data-parallel evaluation does to a confusion matrix: each rank's "
         "matrix, the synced one, the expected one, and every difference explained.</p>"
         "<table><tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
         "<tr><td>LibTorch</td><td>%4</td></tr><tr><td>CUDA</td><td>%5</td></tr></table>")
          .arg(QStringLiteral(SHARDLENS_VERSION), QString::fromLatin1(qVersion()),
               QStringLiteral(SHARDLENS_QT_VERSION),
               SHARDLENS_HAS_TORCH ? QStringLiteral(SHARDLENS_TORCH_VERSION) : tr("not built in"),
               SHARDLENS_HAS_CUDA ? tr("built in") : tr("not built in")));
}

}  // namespace shardlens::ui

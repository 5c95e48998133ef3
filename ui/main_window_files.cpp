// Scenario files, recent files, persisted settings, exports and the About box.
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <exception>
#include <nlohmann/json.hpp>

#include "core/io/files.h"
#include "core/report/metrics.h"
#include "core/report/report.h"
#include "shardlens/config.h"
#include "ui/data_export.h"
#include "ui/heatmap_view.h"
#include "ui/lesson_model.h"
#include "ui/main_window.h"
#include "ui/matrix_panel.h"
#include "ui/memory_setting.h"
#include "ui/render/figures.h"
#include "ui/scenario_panel.h"

namespace shardlens::ui {

bool MainWindow::openScenario(const QString& path) {
  try {
    const Scenario s = load_scenario_file(path.toStdString());
    m_path = path;
    addRecent(path);
    setScenario(s);
    return true;
  } catch (const std::exception& e) {
    showError(QString::fromStdString(e.what()));
    return false;
  }
}

bool MainWindow::saveScenario(const QString& path) {
  try {
    save_scenario_file(m_scenario, path.toStdString());
    m_path = path;
    addRecent(path);
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
  m_path.clear();
  m_panel->selectLesson(row);
  return true;
}

void MainWindow::addRecent(const QString& path) {
  QSettings s;
  QStringList recent = s.value(QStringLiteral("recentFiles")).toStringList();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > 8) recent.removeLast();
  s.setValue(QStringLiteral("recentFiles"), recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  m_recentMenu->clear();
  const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
  for (const QString& path : recent)
    m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openFile(path); })
        ->setToolTip(path);
  m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::readSettings() {
  QSettings s;
  restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(s.value(QStringLiteral("window/state")).toByteArray());
  m_centre->restoreState(s.value(QStringLiteral("window/centreSplitter")).toByteArray());
  setViewOptions(ViewOptions::load(s));
  applyMemoryBudgetSetting();
  rebuildRecentMenu();
}

void MainWindow::writeSettings() const {
  QSettings s;
  s.setValue(QStringLiteral("window/geometry"), saveGeometry());
  s.setValue(QStringLiteral("window/state"), saveState());
  s.setValue(QStringLiteral("window/centreSplitter"), m_centre->saveState());
  m_options.save(s);
  rememberScenario();
}

void MainWindow::rememberScenario() const {
  QSettings().setValue(QStringLiteral("lastScenario"),
                       QString::fromStdString(to_json(m_scenario).dump()));
}

namespace {

const QString kExportDirKey = QStringLiteral("export/dir");
const QString kDpiKey = QStringLiteral("export/dpi");

// "rankView3" -> "rank-3", "syncedView" -> "synced": the view's part of a file name.
QString viewStem(const HeatmapView* view) {
  QString stem = view->objectName();
  stem.remove(QStringLiteral("View"));
  if (stem.startsWith(QLatin1String("rank"))) stem.insert(4, QLatin1Char('-'));
  return stem;
}

// A file-name-safe scenario name ("padding-duplicates"; a run's file stem; else "scenario").
QString scenarioStem(const Scenario& s, const QString& runPath) {
  QString name =
      !runPath.isEmpty() ? QFileInfo(runPath).completeBaseName() : QString::fromStdString(s.name);
  name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
  return name.isEmpty() ? QStringLiteral("scenario") : name;
}

QString exportDir() {
  const QString dir = QSettings().value(kExportDirKey).toString();
  return !dir.isEmpty() && QFileInfo(dir).isDir() ? dir : QDir::homePath();
}

// What the resolution is for, so the number can be chosen.
QString dpiPrompt() {
  return QObject::tr(
      "PNG resolution in dots per inch (SVG and PDF are vectors and need none):\n"
      "96–150 for screens and slides, 300 for print, 600 for a journal's line art.");
}

}  // namespace

QString MainWindow::proposedExportName(const HeatmapView* view) const {
  return scenarioStem(m_scenario, showingRun() ? m_runPath : QString()) + QLatin1Char('-') +
         viewStem(view) + QStringLiteral(".png");
}

void MainWindow::exportView() {
  HeatmapView* view = currentView();
  if (!view || view->data().classes == 0) return;
  QString filter;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export view"), QDir(exportDir()).filePath(proposedExportName(view)),
      tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &filter);
  if (path.isEmpty()) return;
  QSettings().setValue(kExportDirKey, QFileInfo(path).absolutePath());
  const auto format = render::parseFigureFormat(QFileInfo(path).suffix());
  if (!format) return showError(tr("%1: use a .png, .svg or .pdf name").arg(path));
  int dpi = QSettings().value(kDpiKey, 150).toInt();
  if (*format == render::FigureFormat::Png) {
    bool ok = false;
    dpi = QInputDialog::getInt(this, tr("PNG resolution"), dpiPrompt(), dpi, 30, 1200, 10, &ok);
    if (!ok) return;
    QSettings().setValue(kDpiKey, dpi);
  }
  render::Figure f;
  f.panels.push_back(view->data());
  // The same title as the figure set's: scenario and view.
  if (m_result) f.panels.back().title = render::figureTitle(m_result->eval, view->data().title);
  f.style = view->style();
  f.style.compact = false;
  f.style.showColorBar = true;
  f.style.indexLabels = false;  // a figure has room for the names
  QString error;
  if (!render::writeFigure(f, path, *format, dpi, &error)) return showError(error);
  statusBar()->showMessage(tr("Wrote %1").arg(path), 4000);
}

void MainWindow::exportFigureSet() {
  if (!m_result) return;
  const QString dir =
      QFileDialog::getExistingDirectory(this, tr("Export figure set into"), exportDir());
  if (dir.isEmpty()) return;
  QSettings().setValue(kExportDirKey, dir);
  bool ok = false;
  const int dpi = QInputDialog::getInt(this, tr("PNG resolution"), dpiPrompt(),
                                       QSettings().value(kDpiKey, 150).toInt(), 30, 1200, 10, &ok);
  if (!ok) return;
  QSettings().setValue(kDpiKey, dpi);
  QStringList written;
  QString error;
  if (!render::writeFigureSet(
          m_result->eval, dir,
          {render::FigureFormat::Png, render::FigureFormat::Svg, render::FigureFormat::Pdf}, dpi,
          m_options.matrix, m_options.style, m_matrices->figureRanges(), &written, &error))
    return showError(error);
  statusBar()->showMessage(tr("Wrote %1 files into %2").arg(written.size()).arg(dir), 5000);
}

void MainWindow::exportData() {
  if (!m_result) return;
  QString filter;
  const QString metricsFilter = tr("Metrics CSV (*.csv)");
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export data"), QStringLiteral("matrices.csv"),
      tr("CSV (*.csv);;JSON report (*.json);;") + metricsFilter, &filter);
  if (path.isEmpty()) return;
  try {
    const bool json =
        QFileInfo(path).suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0;
    const bool metrics = !json && filter == metricsFilter;
    write_file_atomic(path.toStdString(), json      ? reportJson(m_result->eval)
                                          : metrics ? metrics_csv(m_result->eval)
                                                    : matricesCsv(m_result->eval));
    statusBar()->showMessage(tr("Wrote %1").arg(path), 4000);
  } catch (const std::exception& e) {
    showError(QString::fromStdString(e.what()));
  }
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

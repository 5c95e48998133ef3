#include "ui/controllers/export_controller.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QRegularExpression>

#include "core/io/files.h"
#include "core/io/staged_directory.h"
#include "core/report/export.h"
#include "core/report/metrics.h"
#include "core/vocabulary/types.h"
#include "ui/controllers/data_export.h"
#include "ui/settings/settings.h"
#include "ui/views/heatmap_view.h"

namespace shardlens::ui {

namespace {

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
  const QString dir = Settings::exportDir();
  return !dir.isEmpty() && QFileInfo(dir).isDir() ? dir : QDir::homePath();
}

// What the resolution is for, so the number can be chosen.
QString dpiPrompt() {
  return QObject::tr(
      "PNG resolution in dots per inch (SVG and PDF are vectors and need none):\n"
      "96–150 for screens and slides, 300 for print, 600 for a journal's line art.");
}

}  // namespace

ExportController::ExportController(EvaluationRunner* runner, QWidget* window)
    : QObject(window), m_runner(runner), m_window(window) {
  setObjectName(QStringLiteral("exportController"));
}

QString ExportController::proposedName(const HeatmapView* view, const Scenario& scenario,
                                       const QString& runPath) {
  return scenarioStem(scenario, runPath) + QLatin1Char('-') + viewStem(view) +
         QStringLiteral(".png");
}

void ExportController::exportView(const HeatmapView* view, const ResultPtr& shown,
                                  const QString& name) {
  if (!view || view->data().classes == 0) return;
  const QString path = QFileDialog::getSaveFileName(
      m_window, tr("Export view"), QDir(exportDir()).filePath(name),
      tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"));
  if (path.isEmpty()) return;
  Settings::setExportDir(QFileInfo(path).absolutePath());
  const auto format = render::parseFigureFormat(QFileInfo(path).suffix());
  if (!format) return emit failed(tr("%1: use a .png, .svg or .pdf name").arg(path));
  int dpi = Settings::exportDpi();
  if (*format == render::FigureFormat::Png) {
    bool ok = false;
    dpi = QInputDialog::getInt(m_window, tr("PNG resolution"), dpiPrompt(), dpi, 30, 1200, 10, &ok);
    if (!ok) return;
    Settings::setExportDpi(dpi);
  }
  render::Figure f;
  f.panels.push_back(view->data());
  // The same title as the figure set's: scenario and view.
  if (shown) f.panels.back().title = render::figureTitle(shown->eval, view->data().title);
  f.style = view->style();
  f.style.compact = false;
  f.style.showColorBar = true;
  f.style.indexLabels = false;  // a figure has room for the names
  f.style.maxAspect = 1.0;      // square cells, however upright the view stretched
  m_runner->startTask(
      this, tr("Writing %1").arg(QFileInfo(path).fileName()),
      [f, path, format, dpi](JobProgress*) {
        require_output(path.toStdString(), OutputKind::File, {});  // not a device or a FIFO
        QString error;
        if (!render::writeFigure(f, path, *format, dpi, &error))
          throw InputError(error.toStdString());
        return path;
      },
      [this](const QString& p) { emit written(tr("Wrote %1").arg(p)); },
      [this](const QString& message) { emit failed(message); });
}

void ExportController::exportFigureSet(const ResultPtr& shown, const ViewOptions& options,
                                       const render::FigureSetOptions& ranges) {
  if (!shown) return;
  const QString dir =
      QFileDialog::getExistingDirectory(m_window, tr("Export figure set into"), exportDir());
  if (dir.isEmpty()) return;
  Settings::setExportDir(dir);
  bool ok = false;
  const int dpi = QInputDialog::getInt(m_window, tr("PNG resolution"), dpiPrompt(),
                                       Settings::exportDpi(), 30, 1200, 10, &ok);
  if (!ok) return;
  Settings::setExportDpi(dpi);
  writeFigureSet(shown, dir, dpi, options, ranges);
}

quint64 ExportController::writeFigureSet(const ResultPtr& shown, const QString& dir, int dpi,
                                         const ViewOptions& options,
                                         const render::FigureSetOptions& ranges) {
  return m_runner->startTask(
      this, tr("Writing figures into %1").arg(dir),
      [shown, dir, dpi, options, ranges](JobProgress*) {
        require_output(dir.toStdString(), OutputKind::Directory, {});
        QStringList files;
        // Every figure complete, or none replaced (a full disk at the PDF keeps the old PNGs).
        StagedDirectory stage(dir.toStdString());
        stage.write_and_commit([&] {
          QString error;
          if (!render::writeFigureSet(
                  shown->eval, QString::fromStdString(stage.path()),
                  {render::FigureFormat::Png, render::FigureFormat::Svg, render::FigureFormat::Pdf},
                  dpi, options.matrix, options.style, ranges, &files, &error))
            throw InputError(error.toStdString());
        });
        return int(files.size());
      },
      [this, dir](int count) { emit written(tr("Wrote %1 files into %2").arg(count).arg(dir)); },
      [this](const QString& message) { emit failed(message); });
}

void ExportController::exportData(const ResultPtr& shown) {
  if (!shown) return;
  QString filter;
  const QString metricsFilter = tr("Metrics CSV (*.csv)");
  const QString path = QFileDialog::getSaveFileName(
      m_window, tr("Export data"), QStringLiteral("matrices.csv"),
      tr("CSV (*.csv);;JSON report (*.json);;") + metricsFilter, &filter);
  if (path.isEmpty()) return;
  const bool json =
      QFileInfo(path).suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0;
  writeData(shown, path,
            json                      ? DataKind::Report
            : filter == metricsFilter ? DataKind::Metrics
                                      : DataKind::Matrices);
}

quint64 ExportController::writeData(const ResultPtr& shown, const QString& path, DataKind kind) {
  return m_runner->startTask(
      this, tr("Writing %1").arg(QFileInfo(path).fileName()),
      [shown, path, kind](JobProgress*) {
        const Evaluation& e = shown->eval;
        require_output(path.toStdString(), OutputKind::File, {});
        write_file_atomic(path.toStdString(), kind == DataKind::Report    ? reportJson(e)
                                              : kind == DataKind::Metrics ? metrics_csv(e)
                                                                          : matrices_csv(e));
        return path;
      },
      [this](const QString& p) { emit written(tr("Wrote %1").arg(p)); },
      [this](const QString& message) { emit failed(message); });
}

}  // namespace shardlens::ui

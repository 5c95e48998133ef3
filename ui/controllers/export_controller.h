#pragma once
// File > Export view / figure set / data: the dialogs that ask where and at what resolution,
// and the writing, which runs as a task of the job runner (written() or failed() follow).
// The folder and resolution are remembered in Settings.
#include <QObject>
#include <QString>

#include "ui/jobs/evaluation_runner.h"
#include "ui/render/figures.h"
#include "ui/settings/view_options.h"

class QWidget;

namespace shardlens::ui {

class HeatmapView;

class ExportController : public QObject {
  Q_OBJECT
 public:
  // Dialogs open over `window`.
  ExportController(EvaluationRunner* runner, QWidget* window);

  // What Export view proposes: the scenario (or run file) and the view,
  // "padding-duplicates-synced.png".
  static QString proposedName(const HeatmapView* view, const Scenario& scenario,
                              const QString& runPath);

  // Export view: `view` of `shown` as PNG, SVG or PDF; `name` is the proposed file name.
  void exportView(const HeatmapView* view, const ResultPtr& shown, const QString& name);
  // Export figure set: per-rank, synced, expected and difference in every figure format.
  void exportFigureSet(const ResultPtr& shown, const ViewOptions& options,
                       const render::FigureSetOptions& ranges);
  // Export data: the matrices (CSV, long format), the JSON report or the metrics (CSV).
  void exportData(const ResultPtr& shown);

  // Writes the figure set of `shown` into `dir` in the background.
  quint64 writeFigureSet(const ResultPtr& shown, const QString& dir, int dpi,
                         const ViewOptions& options, const render::FigureSetOptions& ranges);
  enum class DataKind { Matrices, Report, Metrics };
  // Writes `kind` of `shown` to `path` in the background.
  quint64 writeData(const ResultPtr& shown, const QString& path, DataKind kind);

 signals:
  void written(const QString& message);  // "Wrote PATH", for the status bar
  void failed(const QString& message);

 private:
  EvaluationRunner* m_runner;
  QWidget* m_window;
};

}  // namespace shardlens::ui

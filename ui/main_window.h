#pragma once
// The main window: scenario panel (left), heatmaps (centre) over the shard strip, diagnosis,
// charts and the clicked cell's samples (docks), display toolbar, and a status bar with the
// background job's progress and a cancel button.
#include <QMainWindow>
#include <QPointer>
#include <QTimer>
#include <optional>

#include "core/evaluation/scenario.h"
#include "ui/evaluation_runner.h"
#include "ui/view_options.h"

class QAction;
class QComboBox;
class QLabel;
class QMenu;
class QProgressBar;
class QToolButton;

class QScrollArea;
class QSplitter;

namespace shardlens::ui {

class ChartsPanel;
class CompareDialog;
class DiagnosisPanel;
class HeatmapView;
class LessonModel;
class MatrixPanel;
class MetricsPanel;
class SamplePanel;
class ScenarioPanel;
class RunBanner;
class RealRunDialog;
class RealRunJob;
class ShardStrip;
class WelcomePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  void setScenario(const Scenario& s);  // shows it and recomputes
  const Scenario& scenario() const { return m_scenario; }
  bool openScenario(const QString& path);
  bool saveScenario(const QString& path);
  bool loadLesson(const QString& name);
  // Opens a run file (.slrun) in the background; the result or an error dialog follows.
  // The current view stays until the file has loaded, and stays when it fails.
  quint64 openRun(const QString& path);
  // A run file by its .slrun suffix, else a scenario (command line, recent files).
  bool openFile(const QString& path);
  // Compare with…: the evaluation on screen beside another (a run file, RUN@epoch, or a
  // scenario file) in a dialog; null and an error dialog when `other` cannot be read.
  // `index`: which evaluation of the run file (its loaders and validations), else the first of
  // `epoch`, else the first.
  CompareDialog* compareWith(const QString& other, std::optional<int64_t> epoch = std::nullopt,
                             std::optional<size_t> index = std::nullopt);
  // The evaluation on screen beside `other` (named `otherName`) in a Compare dialog.
  // Run > Simulate this run: the open run's recorded settings in the scenario panel and the
  // simulation beside the run (nullptr, after an error dialog, when it cannot be simulated).
  CompareDialog* simulateThisRun();
  CompareDialog* compareWithEvaluation(std::shared_ptr<const Evaluation> other,
                                       const QString& otherName);
  // Run > Run for real…: the dialog for the scenario on screen (one at a time). When its run
  // ends, the run opens and, complete, beside its simulation with the model predictor
  // (realRunComparison()); failures are dialogs (main_window_real_run.cpp).
  RealRunDialog* showRealRunDialog();
  CompareDialog* realRunComparison() const;
  // Import dumps…: imports per-rank dumps into `out` (as shardlens-cli import) and opens it.
  // Returns false (and shows the error) when the dumps are refused; nothing is written then.
  bool importDumps(const QStringList& dumps, const QString& dataset, int classes,
                   const QString& out);
  // Back from a run file to the scenario simulated before it.
  void leaveRun();
  bool showingRun() const { return !m_runPath.isEmpty(); }
  // The file name Export view proposes: scenario (or run file) and view,
  // "padding-duplicates-synced.png".
  QString proposedExportName(const HeatmapView* view) const;
  // Edit > Copy: the focused (else last clicked, else synced) matrix as tab-separated text.
  void copyMatrix();
  // Startup without a file: the last scenario, or the seed lesson on the first start.
  void restoreSession();
  void setViewOptions(const ViewOptions& o);
  const ViewOptions& viewOptions() const { return m_options; }

  EvaluationRunner* runner() const { return m_runner; }
  const ResultPtr& result() const { return m_result; }
  MatrixPanel* matrices() const { return m_matrices; }
  ChartsPanel* charts() const { return m_charts; }
  ScenarioPanel* scenarioPanel() const { return m_panel; }
  LessonModel* lessons() const { return m_lessons; }
  SamplePanel* samples() const { return m_samples; }
  RunBanner* runBanner() const { return m_banner; }
  WelcomePanel* welcome() const { return m_welcome; }
  const QString& lastError() const { return m_lastError; }
  // Errors open a window-modal dialog unless turned off (tests read lastError()).
  void setErrorDialogs(bool on) { m_errorDialogs = on; }

 signals:
  void resultShown(quint64 job);
  void errorShown(const QString& message);

 public slots:
  void recompute();
  void showError(const QString& message);

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  void buildDocks();
  void buildActions();
  void buildToolbar();
  void buildStatusBar();
  void onResult(ResultPtr result);
  void onFailed(quint64 job, const QString& message);
  void setRunView(const ResultPtr& result);  // enters run mode, or leaves it when null
  void stepRunEpoch(int delta);              // the next / previous epoch of a run (wraps)
  void toggleRunPlay();                      // plays / stops a run's epochs
  void askCompare();                         // File > Compare with…
  void askImport();                          // File > Import dumps…
  void onRealRunFinished(RealRunJob* job);   // opens the run (and its comparison) or says why not
  void askMemoryBudget();                    // Settings > Memory budget…
  void onProgress(quint64 job, const QString& stage, double fraction);
  void setBusy(bool busy);
  void updateTitle();
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  void readSettings();
  void rememberScenario() const;  // every change, so a crash loses nothing
  void writeSettings() const;
  void exportView();
  void exportFigureSet();
  void exportData();
  void about();
  HeatmapView* currentView() const;
  void watchView(HeatmapView* v);

  EvaluationRunner* m_runner;
  LessonModel* m_lessons;
  ScenarioPanel* m_panel = nullptr;
  MatrixPanel* m_matrices = nullptr;
  ShardStrip* m_strip = nullptr;
  DiagnosisPanel* m_diagnosis = nullptr;
  MetricsPanel* m_metrics = nullptr;
  ChartsPanel* m_charts = nullptr;
  SamplePanel* m_samples = nullptr;
  RunBanner* m_banner = nullptr;
  QWidget* m_panelScroll = nullptr;
  WelcomePanel* m_welcome = nullptr;
  QAction* m_simulateRun = nullptr;  // enabled while a run file is shown
  QList<QAction*> m_epochActions;    // a simulation's set_epoch, or a multi-epoch run's epochs
  QTimer m_runPlay;                  // plays a run's epochs
  QMenu* m_recentMenu = nullptr;
  QMenu* m_viewMenu = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_stage = nullptr;
  QLabel* m_verdict = nullptr;
  QToolButton* m_cancel = nullptr;
  QComboBox* m_normalization = nullptr;
  QComboBox* m_colormap = nullptr;
  QComboBox* m_order = nullptr;
  QAction* m_log = nullptr;
  QAction* m_values = nullptr;

  Scenario m_scenario;
  QString m_path;            // scenario file, empty when unsaved
  QString m_runPath;         // the run file on screen, empty while simulating
  QString m_pendingRunPath;  // the run file being opened
  quint64 m_runJob = 0;      // its job, to word a failure as a file error
  ResultPtr m_result;
  ViewOptions m_options;
  QString m_lastError;
  bool m_errorDialogs = true;
  QPointer<HeatmapView> m_lastView;
  QPointer<RealRunDialog> m_realRun;
  QPointer<CompareDialog> m_realCompare;
  QSplitter* m_centre = nullptr;         // matrices above the shard strip; state saved
  QScrollArea* m_stripScroll = nullptr;  // the shard strip, height capped
  int m_stripLanes = -1;                 // lanes when the strip was last fitted
  void capStripHeight();
};

}  // namespace shardlens::ui

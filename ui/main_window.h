#pragma once
// The main window: a shell that lays out the views and wires the controllers. Scenario panel
// (left), heatmaps (centre) over the shard strip, diagnosis, charts and the clicked cell's
// samples (docks), display toolbar, and a status bar with the background job's progress and a
// cancel button. What the menus do is the controllers' (each a child QObject, tested alone):
// RunOpener (runs and their epochs), CompareController (Compare with…, Simulate this run),
// ImportController, ExportController, RecentFiles, RealRunController and FollowController
// (File > Follow runs folder); every load and computation runs in the one EvaluationRunner;
// every setting is kept by Settings. What is
// shown (a simulation or a run file) is ShownSource's, and a result reaches every view, panel
// and controller by its one signal, shown().
#include <QMainWindow>
#include <QPointer>

#include "core/evaluation/scenario.h"
#include "ui/jobs/evaluation_runner.h"
#include "ui/settings/view_options.h"

class QAction;
class QLabel;
class QMenu;
class QScrollArea;
class QSplitter;

namespace shardlens {
struct RecordedRunScenario;
}

namespace shardlens::ui {

class ChartsPanel;
class CompareController;
class ConfusionPanel;
class DisplayToolbar;
class ExportController;
class FollowController;
class HeatmapView;
class ImportController;
class LessonModel;
class MatrixPanel;
class MetricsPanel;
class RealRunController;
class RecentFiles;
class RunBanner;
class RunOpener;
class SamplePanel;
class ScenarioPanel;
class ShardStrip;
class ShownSource;
class WelcomePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  void setScenario(const Scenario& s);  // shows it and recomputes
  const Scenario& scenario() const;
  bool openScenario(const QString& path);
  bool saveScenario(const QString& path);
  bool loadLesson(const QString& name);
  // Opens a run file (.slrun) in the background (RunOpener); the result or an error dialog
  // follows. The current view stays until the file has loaded, and stays when it fails.
  quint64 openRun(const QString& path);
  // A run file by its .slrun suffix, else a scenario (command line, recent files).
  bool openFile(const QString& path);
  // Follows a training run's folder (FollowController): each run file that lands there is
  // shown as one more validation of one run. False, with an error, when it is no folder.
  // Opening another file, Back to simulation or File > Stop following stop it.
  bool followRuns(const QString& folder);
  void stopFollowing();
  // Back from a run file to the scenario simulated before it.
  void leaveRun();
  bool showingRun() const;
  // Edit > Copy: the focused (else last clicked, else synced) matrix as tab-separated text.
  void copyMatrix();
  // Startup without a file: the last scenario, or the seed lesson on the first start.
  void restoreSession();
  void setViewOptions(const ViewOptions& o);
  const ViewOptions& viewOptions() const { return m_options; }
  // What the views show.
  const ResultPtr& result() const;
  const QString& lastError() const { return m_lastError; }
  // Errors open a window-modal dialog unless turned off (tests read lastError()).
  void setErrorDialogs(bool on) { m_errorDialogs = on; }
  // Shows the window within its screen: maximised on the first start (no saved size), and
  // where the screen is smaller than the saved size, not cut at the edges.
  void showOnScreen();

 signals:
  // A result is on screen, every view showing it (after ShownSource::shown()).
  void resultShown(quint64 job);
  void errorShown(const QString& message);

 public slots:
  void recompute();
  void showError(const QString& message);

 protected:
  void closeEvent(QCloseEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

 private:
  void buildCentre();
  void buildDocks();
  void buildActions();
  void buildToolbar();
  void buildStatusBar();
  void connectControllers();
  void connectFollowing();
  void onResult(ResultPtr result);  // shown once its views are ready
  void onFailed(quint64 job, const QString& message);
  void showVerdict(const ResultPtr& result);  // the status bar's verdict and timing
  void showRunView(const ResultPtr& run);     // banner, read-only panel, the run's epochs
  void showSimulationView();                  // back to the editable panel
  void stepRunEpoch(int delta);               // the next / previous epoch of a run (wraps)
  void onRunSimulated(const RecordedRunScenario& like);
  void askMemoryBudget();  // Settings > Memory budget…
  void updateTitle();
  void readSettings();
  void rememberScenario() const;  // every change, so a crash loses nothing
  void writeSettings() const;
  void about();
  HeatmapView* currentView() const;
  void watchView(HeatmapView* v);
  void exportView(const HeatmapView* view);  // File > Export view, with its proposed name
  void capStripHeight();
  // Narrows the docks, never below the widths they read at, when the views in the centre
  // would stand side by side with more room (or stack less squeezed); widens a right-hand dock
  // narrower than it reads where the views can spare it. A small screen keeps readable
  // heatmaps, tab titles and metrics.
  void makeRoomForViews();
  // The narrowest the right-hand docks read at: every tab title whole, the Metrics table's
  // numbers whole and its names on at most two lines.
  int readableRightDockWidth() const;

  // The job runner, what is shown, and the controllers.
  EvaluationRunner* m_runner;
  ShownSource* m_source;
  RunOpener* m_runs;
  CompareController* m_compare;
  ImportController* m_import;
  ExportController* m_export;
  RealRunController* m_realRuns;
  FollowController* m_follow;
  RecentFiles* m_recent = nullptr;
  LessonModel* m_lessons;

  // The views.
  ScenarioPanel* m_panel = nullptr;
  QWidget* m_panelScroll = nullptr;
  RunBanner* m_banner = nullptr;
  WelcomePanel* m_welcome = nullptr;
  MatrixPanel* m_matrices = nullptr;
  ShardStrip* m_strip = nullptr;
  QSplitter* m_centre = nullptr;         // matrices above the shard strip; state saved
  QScrollArea* m_stripScroll = nullptr;  // the shard strip, height capped
  int m_stripLanes = -1;                 // lanes when the strip was last fitted
  SamplePanel* m_samples = nullptr;
  ChartsPanel* m_charts = nullptr;
  ConfusionPanel* m_confusion = nullptr;  // the most confused pairs and worst rows
  MetricsPanel* m_metrics = nullptr;
  QPointer<HeatmapView> m_lastView;

  // Menus, toolbar and status bar.
  QAction* m_simulateRun = nullptr;  // enabled while a run file is shown
  QList<QAction*> m_epochActions;    // a simulation's set_epoch, or a multi-epoch run's epochs
  QMenu* m_viewMenu = nullptr;
  DisplayToolbar* m_display = nullptr;
  QLabel* m_verdict = nullptr;
  QLabel* m_followStatus = nullptr;  // what is followed, while it is
  QAction* m_stopFollowing = nullptr;

  // How it is shown.
  ViewOptions m_options;
  QString m_lastError;
  bool m_errorDialogs = true;
  bool m_restoredAfterFailure = false;  // once: see onFailed
};

}  // namespace shardlens::ui

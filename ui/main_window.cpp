#include "ui/main_window.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "core/evaluation/scenario_settings.h"
#include "core/realrun/model_predictions.h"
#include "core/report/verdict.h"
#include "core/sim/recorded_run_simulation.h"
#include "ui/controllers/compare_controller.h"
#include "ui/controllers/export_controller.h"
#include "ui/controllers/follow_controller.h"
#include "ui/controllers/import_controller.h"
#include "ui/controllers/real_run_controller.h"
#include "ui/controllers/run_opener.h"
#include "ui/jobs/job_status.h"
#include "ui/models/lesson_model.h"
#include "ui/models/recent_files.h"
#include "ui/models/shown_source.h"
#include "ui/panels/confusion_panel.h"
#include "ui/panels/diagnosis_panel.h"
#include "ui/panels/groups_panel.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/metrics_panel.h"
#include "ui/panels/run_banner.h"
#include "ui/panels/sample_panel.h"
#include "ui/panels/scenario_panel.h"
#include "ui/panels/welcome_panel.h"
#include "ui/settings/settings.h"
#include "ui/views/charts.h"
#include "ui/views/heatmap_view.h"
#include "ui/views/shard_strip.h"

namespace shardlens::ui {

namespace {
// The narrowest the docks become to leave the heatmaps room (makeRoomForViews): the
// Metrics dock's numbers and the Scenario panel's fields still whole.
constexpr int kNarrowRightDock = 280;
constexpr int kNarrowLeftDock = 250;
}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_runner(new EvaluationRunner(this)),
      m_source(new ShownSource(this)),
      m_runs(new RunOpener(m_runner, this)),
      m_compare(new CompareController(m_runner, this)),
      m_import(new ImportController(m_runner, this)),
      m_export(new ExportController(m_runner, this)),
      m_realRuns(new RealRunController(m_runner, m_runs, m_compare, this)),
      m_follow(new FollowController(m_runner, m_source, this)),
      m_lessons(new LessonModel(this)) {
  setObjectName(QStringLiteral("mainWindow"));
  install_model_predictor();  // `model:` predictors in the predictor box and lessons
  m_lessons->loadDirectory(LessonModel::defaultDirectory());
  buildCentre();
  buildDocks();
  buildActions();
  buildToolbar();
  buildStatusBar();
  connectControllers();
  m_matrices->setRunner(m_runner);
  m_matrices->setOptions(m_options.matrix, m_options.style);
  resize(1600, 1000);  // first start; readSettings() restores the user's size after that
  readSettings();
  if (!m_lessons->errors().isEmpty())
    statusBar()->showMessage(
        tr("Some lessons could not be read: %1").arg(m_lessons->errors().join("; ")));
}

MainWindow::~MainWindow() {
  // A real run's dialog and job go first: nothing they started reaches a window being torn down.
  delete m_realRuns;
  m_realRuns = nullptr;
  m_runner->cancel();
  m_runner->waitIdle();
}

void MainWindow::buildCentre() {
  m_matrices = new MatrixPanel(this);
  m_strip = new ShardStrip(this);
  m_strip->setObjectName(QStringLiteral("shardStrip"));
  // The one path from a result to its views: each view follows ShownSource::shown() once.
  connect(m_source, &ShownSource::shown, m_matrices, &MatrixPanel::setResult);
  connect(m_source, &ShownSource::shown, m_strip, &ShardStrip::setResult);
  connect(m_source, &ShownSource::shown, this, &MainWindow::capStripHeight);
  connect(m_strip, &ShardStrip::heightHintChanged, this, &MainWindow::capStripHeight);
  // Another matrix (1000 classes' wider labels and sums) may need a wider centre.
  connect(m_source, &ShownSource::shown, this,
          [this] { QTimer::singleShot(0, this, &MainWindow::makeRoomForViews); });
  m_centre = new QSplitter(Qt::Vertical);
  m_centre->setObjectName(QStringLiteral("centreSplitter"));
  auto* scroll = new QScrollArea(m_centre);
  scroll->setWidget(m_matrices);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  m_centre->addWidget(scroll);
  // The strip scrolls inside a capped height: at 64 ranks its lanes would take most of the
  // window from the matrices.
  m_stripScroll = new QScrollArea(m_centre);
  m_stripScroll->setObjectName(QStringLiteral("shardStripScroll"));
  m_stripScroll->setWidget(m_strip);
  m_stripScroll->setWidgetResizable(true);
  m_stripScroll->setFrameShape(QFrame::NoFrame);
  m_stripScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_centre->addWidget(m_stripScroll);
  m_centre->setStretchFactor(0, 5);
  m_centre->setStretchFactor(1, 1);
  capStripHeight();
  // The welcome panel sits above the views it explains.
  auto* central = new QWidget(this);
  auto* centralLayout = new QVBoxLayout(central);
  centralLayout->setContentsMargins(0, 0, 0, 0);
  centralLayout->setSpacing(2);
  m_welcome = new WelcomePanel(central);
  m_welcome->setVisible(!WelcomePanel::dismissedForGood());
  centralLayout->addWidget(m_welcome);
  centralLayout->addWidget(m_centre, 1);
  setCentralWidget(central);
}

void MainWindow::buildDocks() {
  const auto dock = [this](const QString& title, const char* name, QWidget* w,
                           Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(QLatin1String(name));
    d->setWidget(w);
    addDockWidget(area, d);
    return d;
  };
  m_panel = new ScenarioPanel(m_lessons, this);
  auto* panelScroll = new QScrollArea(this);
  panelScroll->setWidget(m_panel);
  panelScroll->setWidgetResizable(true);
  panelScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  panelScroll->setMinimumWidth(m_panel->minimumSizeHint().width() + 24);
  // The run banner stays above the scroll area so it is seen however the panel scrolls.
  auto* scenarioBox = new QWidget(this);
  auto* scenarioLayout = new QVBoxLayout(scenarioBox);
  scenarioLayout->setContentsMargins(0, 0, 0, 0);
  m_banner = new RunBanner(scenarioBox);
  m_banner->hide();
  // At the top of its cell: alone in the dock (an import without a scenario hides the panel)
  // the cell is taller than the banner, which was centred halfway down the dock.
  scenarioLayout->addWidget(m_banner, 0, Qt::AlignTop);
  scenarioLayout->addWidget(panelScroll, 1);
  scenarioLayout->addStretch(0);  // takes the room when a run without scenario hides the panel
  m_panelScroll = panelScroll;
  dock(tr("Scenario"), "scenarioDock", scenarioBox, Qt::LeftDockWidgetArea);
  auto* diagnosis = new DiagnosisPanel(this);
  diagnosis->setObjectName(QStringLiteral("diagnosis"));
  connect(m_source, &ShownSource::shown, diagnosis, &DiagnosisPanel::setResult);
  auto* diag = dock(tr("Diagnosis"), "diagnosisDock", diagnosis, Qt::RightDockWidgetArea);
  m_charts = new ChartsPanel(this);
  connect(m_source, &ShownSource::shown, m_charts, &ChartsPanel::setResult);
  auto* charts = dock(tr("Charts"), "chartsDock", m_charts, Qt::RightDockWidgetArea);
  m_samples = new SamplePanel(this);
  connect(m_source, &ShownSource::shown, m_samples, &SamplePanel::clear);
  auto* samples = dock(tr("Samples"), "samplesDock", m_samples, Qt::RightDockWidgetArea);
  // Many classes at a glance, one dock (the right-hand tabs are narrow already): the most
  // confused pairs and worst rows, and the class groups of a hierarchy. Each page fills
  // only while it is shown.
  auto* classTabs = new QTabWidget(this);
  classTabs->setObjectName(QStringLiteral("classTabs"));
  classTabs->setDocumentMode(true);
  m_confusion = new ConfusionPanel(classTabs);
  connect(m_source, &ShownSource::shown, m_confusion, &ConfusionPanel::setResult);
  classTabs->addTab(m_confusion, tr("Most confused"));
  auto* groups = new GroupsPanel(classTabs);
  connect(m_source, &ShownSource::shown, groups, &GroupsPanel::setResult);
  classTabs->addTab(groups, tr("Groups"));
  auto* classes = dock(tr("Classes"), "classesDock", classTabs, Qt::RightDockWidgetArea);
  // The metrics sit below the diagnosis, whichever tab is raised (split before tabifying: a
  // dock split from a tabbed one would become another tab).
  m_metrics = new MetricsPanel(this);
  connect(m_source, &ShownSource::shown, m_metrics, &MetricsPanel::setResult);
  splitDockWidget(diag, dock(tr("Metrics"), "metricsDock", m_metrics, Qt::RightDockWidgetArea),
                  Qt::Vertical);
  tabifyDockWidget(diag, charts);
  tabifyDockWidget(charts, samples);
  tabifyDockWidget(samples, classes);
  diag->raise();
  resizeDocks({findChild<QDockWidget*>(QStringLiteral("scenarioDock")), diag}, {300, 380},
              Qt::Horizontal);
}

void MainWindow::buildStatusBar() {
  m_verdict = new QLabel(this);
  m_verdict->setObjectName(QStringLiteral("verdict"));
  statusBar()->addWidget(m_verdict, 1);
  m_followStatus = new QLabel(this);
  m_followStatus->setObjectName(QStringLiteral("followStatus"));
  m_followStatus->hide();
  statusBar()->addPermanentWidget(m_followStatus);
  statusBar()->addPermanentWidget(new JobStatus(m_runner, this));
}

void MainWindow::connectControllers() {
  connect(m_runner, &EvaluationRunner::finished, this, &MainWindow::onResult);
  // The rest of the one path: the mode's look, the controllers, the status bar, and last the
  // window's own resultShown().
  connect(m_source, &ShownSource::runShown, this, &MainWindow::showRunView);
  connect(m_source, &ShownSource::runLeft, this, &MainWindow::showSimulationView);
  connect(m_source, &ShownSource::shown, this, [this](const ResultPtr& shown) {
    // Comparisons put what is on screen on their left (shared with the result, not copied).
    m_compare->setCurrent(std::shared_ptr<const Evaluation>(shown, &shown->eval),
                          m_source->shownName());
  });
  connect(m_source, &ShownSource::shown, m_realRuns, &RealRunController::resultShown);
  connect(m_source, &ShownSource::shown, this, &MainWindow::showVerdict);
  connect(m_source, &ShownSource::shown, this,
          [this](const ResultPtr& shown) { emit resultShown(shown->jobId); });
  connect(m_runner, &EvaluationRunner::failed, this, &MainWindow::onFailed);
  connect(m_runner, &EvaluationRunner::cancelled, this,
          [this] { statusBar()->showMessage(tr("Cancelled; showing the previous result"), 4000); });
  // Tasks (compare, import, exports, a real run's simulation) say what they do while they run.
  connect(m_runner, &EvaluationRunner::taskStarted, this,
          [this](quint64, const QString& stage) { statusBar()->showMessage(stage + "…"); });
  connect(m_runner, &EvaluationRunner::taskEnded, this, [this] {
    if (m_runner->tasksRunning() == 0) statusBar()->clearMessage();
  });
  connect(m_runs, &RunOpener::opening, this, [this](const QString& path) {
    statusBar()->showMessage(tr("Opening %1…").arg(QFileInfo(path).fileName()));
  });
  connect(m_runs, &RunOpener::playStep, this, [this] { stepRunEpoch(1); });
  connectFollowing();
  connect(m_runs, &RunOpener::playingChanged, m_banner, &RunBanner::setPlaying);
  connect(m_compare, &CompareController::failed, this, &MainWindow::showError);
  connect(m_compare, &CompareController::simulated, this, &MainWindow::onRunSimulated);
  connect(m_import, &ImportController::failed, this, &MainWindow::showError);
  connect(m_import, &ImportController::imported, this, &MainWindow::openRun);
  connect(m_export, &ExportController::failed, this, &MainWindow::showError);
  connect(m_export, &ExportController::written, this,
          [this](const QString& message) { statusBar()->showMessage(message, 4000); });
  connect(m_realRuns, &RealRunController::error, this, &MainWindow::showError);
  connect(m_realRuns, &RealRunController::status, this,
          [this](const QString& message, int ms) { statusBar()->showMessage(message, ms); });
  connect(m_recent, &RecentFiles::openRequested, this, &MainWindow::openFile);

  connect(m_banner, &RunBanner::backToSimulation, this, &MainWindow::leaveRun);
  connect(m_banner, &RunBanner::stepEpoch, this, &MainWindow::stepRunEpoch);
  connect(m_banner, &RunBanner::togglePlay, m_runs, &RunOpener::togglePlay);
  connect(m_panel, &ScenarioPanel::changed, this, [this](const Scenario& s) {
    // Only programmatic changes (a lesson chosen from the menu) reach here while a run is
    // shown, since the panel is disabled then: they mean "simulate this instead".
    m_source->leaveRun();
    m_source->setScenario(s);
    updateTitle();
    recompute();
    rememberScenario();
  });
  connect(m_panel, &ScenarioPanel::error, this, &MainWindow::showError);
  // The window's title and the panel's "(modified: ...)" note say what the views show: the
  // settings that took effect, from the result on screen.
  connect(m_source, &ShownSource::shown, this, [this](const ResultPtr& result) {
    updateTitle();
    if (result && !m_source->showingRun()) m_panel->setShownScenario(result->eval.scenario());
  });
  connect(m_samples, &SamplePanel::error, this, &MainWindow::showError);
  connect(m_matrices, &MatrixPanel::cellActivated, this, [this](const CellRef& cell) {
    m_samples->showCell(m_source->result(), cell);
    if (auto* dock = findChild<QDockWidget*>(QStringLiteral("samplesDock"))) dock->raise();
  });
  // A pair or wrong row chosen in the Most confused tab: its samples, and the synced view's
  // cursor on its cell.
  connect(m_confusion, &ConfusionPanel::cellActivated, this, [this](const CellRef& cell) {
    m_samples->showCell(m_source->result(), cell);
    m_matrices->syncedView()->focusClasses(cell.trueClass, cell.predClass);
  });
  connect(m_matrices, &MatrixPanel::viewCreated, this, &MainWindow::watchView);
  for (HeatmapView* v : m_matrices->allViews()) watchView(v);
}

const Scenario& MainWindow::scenario() const {
  return m_source->scenario();
}

bool MainWindow::showingRun() const {
  return m_source->showingRun();
}

const ResultPtr& MainWindow::result() const {
  return m_source->result();
}

void MainWindow::setScenario(const Scenario& s) {
  m_source->setScenario(s);
  m_panel->setScenario(s);
  updateTitle();
  recompute();
  rememberScenario();
}

void MainWindow::recompute() {
  m_runner->start(m_source->scenario());
}

void MainWindow::onResult(ResultPtr result) {
  // Nothing changes on screen until the views are ready, so the status and every panel show
  // the same result (a run's other epoch, or views of other options, are prepared first).
  m_source->request(result);
  if (!m_matrices->canShow(result)) {
    m_matrices->prepare(result, [this, result] { onResult(result); });
    return;
  }
  m_source->show(std::move(result));
}

void MainWindow::showVerdict(const ResultPtr& result) {
  const Verdict verdict = verdict_of(result->eval);
  const bool correct = verdict.kind == VerdictKind::Correct;
  m_verdict->setText(QString::fromStdString(verdict.status));
  m_verdict->setStyleSheet(correct ? QString()
                                   : QStringLiteral("color: #b2182b; font-weight: bold"));
  statusBar()->showMessage(
      (!result->eval.provenance.file.empty() ? tr("Loaded in %1 ms") : tr("Evaluated in %1 ms"))
          .arg(result->seconds * 1000, 0, 'f', 1),
      3000);
}

void MainWindow::onFailed(quint64 job, const QString& message) {
  statusBar()->clearMessage();
  // The views keep what they showed: nothing was replaced yet.
  showError(m_runs->failureText(job, message));
  // A window that showed nothing yet (a run file given at start that cannot be read) shows
  // the last scenario behind the message rather than empty views; once, so a scenario that
  // fails too cannot start a loop.
  if (!m_source->requested() && !m_restoredAfterFailure) {
    m_restoredAfterFailure = true;
    restoreSession();
  }
}

void MainWindow::showError(const QString& shown) {
  // The window's user sees fields, not command-line flags.
  const QString message = QString::fromStdString(with_field_labels(shown.toStdString()));
  m_lastError = message;
  emit errorShown(message);
  if (!m_errorDialogs) return;
  auto* box =
      new QMessageBox(QMessageBox::Warning, tr("ShardLens"), message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // window-modal, not blocking: a job may still deliver meanwhile
}

void MainWindow::updateTitle() {
  setWindowTitle(m_source->title() + QStringLiteral(" — ShardLens"));
  setWindowFilePath(m_source->filePath());
}

void MainWindow::closeEvent(QCloseEvent* e) {
  m_panel->setPlaying(false);
  m_runner->cancel();
  writeSettings();
  e->accept();
}

void MainWindow::watchView(HeatmapView* v) {
  // The view last clicked (or right-clicked) is the one File > Export view writes.
  connect(v, &HeatmapView::cellClicked, this, [this, v] { m_lastView = v; });
  connect(v, &HeatmapView::exportRequested, this, [this, v] {
    m_lastView = v;
    exportView(v);
  });
}

void MainWindow::exportView(const HeatmapView* view) {
  m_export->exportView(
      view, m_source->result(),
      ExportController::proposedName(view, m_source->scenario(), m_source->runPath()));
}

void MainWindow::capStripHeight() {
  // All lanes at their natural height up to the height of about 12 lanes; beyond, the
  // strip scrolls inside (its lanes never thinner than its minimum size allows).
  constexpr int kCap = 18 + 16 * 12 + 8;
  m_strip->setMinimumHeight(m_strip->minimumSizeHint().height());
  const int wanted = std::min(m_strip->sizeHint().height(), kCap);
  m_stripScroll->setMaximumHeight(wanted);
  // A new world size: every lane in view again (until the user drags the splitter).
  if (m_strip->laneCount() != m_stripLanes) {
    m_stripLanes = m_strip->laneCount();
    // Before the first layout the splitter has no size yet: then the window's height.
    const QList<int> sizes = m_centre->sizes();
    const int total = std::max(sizes.value(0) + sizes.value(1), m_centre->height());
    if (total > wanted) m_centre->setSizes({total - wanted, wanted});
  }
}

void MainWindow::showOnScreen() {
  const QRect room = screen() ? screen()->availableGeometry() : QRect();
  // The first start (no size of the user's yet) takes the whole screen, whatever its size:
  // the views are what a 1920 x 1080 screen is for, not a 1600 x 1000 window in a corner.
  if (Settings::windowGeometry().isEmpty() && !room.isEmpty()) {
    setGeometry(room);  // the screen's size too where no window manager maximises
    showMaximized();
    return;
  }
  if (room.isEmpty() || (width() <= room.width() && height() <= room.height())) {
    show();
    return;
  }
  resize(size().boundedTo(room.size()));
  move(room.topLeft());
  showMaximized();
}

void MainWindow::resizeEvent(QResizeEvent* e) {
  QMainWindow::resizeEvent(e);
  // After the layout has given the centre its new width.
  QTimer::singleShot(0, this, &MainWindow::makeRoomForViews);
}

void MainWindow::makeRoomForViews() {
  // The centre's width at which the synced view and the expected and difference views stand
  // side by side, each readable, with a vertical scroll bar beside them.
  const int scrollBar = style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4;
  // Wider still where the synced view would otherwise stretch upright beside them.
  const int wanted = m_matrices->balancedWidth() + scrollBar;
  // The dock shown in an area (of tabbed ones, the raised tab: the others are not laid out).
  const auto shownIn = [this](Qt::DockWidgetArea area) -> QDockWidget* {
    QDockWidget* shown = nullptr;
    for (QDockWidget* d : findChildren<QDockWidget*>())
      if (d->isVisible() && !d->isFloating() && dockWidgetArea(d) == area &&
          !d->visibleRegion().isEmpty() && (!shown || d->width() > shown->width()))
        shown = d;
    return shown;
  };
  QDockWidget* right = shownIn(Qt::RightDockWidgetArea);
  QDockWidget* left = shownIn(Qt::LeftDockWidgetArea);
  const auto widthOf = [](const QDockWidget* d) { return d ? d->width() : 0; };
  // The narrowest each dock reads at.
  const int rightMin =
      right
          ? std::max({kNarrowRightDock, right->minimumSizeHint().width(), readableRightDockWidth()})
          : 0;
  const int leftMin = left ? std::max(kNarrowLeftDock, left->minimumSizeHint().width()) : 0;
  const int total = m_centre->width() + widthOf(right) + widthOf(left);
  // A right-hand dock narrower than it reads (cut tab titles or metrics) widens first...
  int r = std::max(widthOf(right), rightMin);
  int l = widthOf(left);
  // ...then, where the centre misses width, the docks give it down to their readable widths,
  // the right-hand tabs first.
  if (const int missing = wanted - (total - r - l); missing > 0) {
    const int fromRight = std::min(missing, r - rightMin);
    r -= fromRight;
    l -= std::clamp(missing - fromRight, 0, std::max(0, l - leftMin));
  }
  // Views that stack whatever the docks give keep their readable width: the right-hand dock
  // widens only as far as they allow.
  if (const int squeezed = m_matrices->minimumSizeHint().width() + scrollBar - (total - r - l);
      squeezed > 0 && r > widthOf(right))
    r = std::max(widthOf(right), r - squeezed);
  QList<QDockWidget*> docks;
  QList<int> widths;
  if (right && r != right->width()) {
    docks << right;
    widths << r;
  }
  if (left && l != left->width()) {
    docks << left;
    widths << l;
  }
  if (!docks.isEmpty()) resizeDocks(docks, widths, Qt::Horizontal);
}

int MainWindow::readableRightDockWidth() const {
  // The table's width and what its dock puts around it.
  int width = m_metrics->isVisible() ? m_metrics->readableWidth() +
                                           m_metrics->parentWidget()->width() - m_metrics->width()
                                     : 0;
  // The tab bar of the right-hand docks, each title whole (QTabBar::sizeHint spans the
  // unelided tabs).
  const int centreRight = centralWidget()->geometry().right();
  for (const QTabBar* bar : findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly))
    if (bar->isVisible() && bar->geometry().left() >= centreRight)
      width = std::max(width, bar->sizeHint().width());
  return width;
}

HeatmapView* MainWindow::currentView() const {
  return m_lastView ? m_lastView.data() : m_matrices->syncedView();
}

}  // namespace shardlens::ui

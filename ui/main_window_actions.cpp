// Menus, shortcuts and the display toolbar of the main window.
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QFileDialog>
#include <QInputDialog>
#include <QKeySequence>
#include <QLineEdit>
#include <QMenuBar>
#include <QStatusBar>

#include "ui/controllers/compare_controller.h"
#include "ui/controllers/data_export.h"
#include "ui/controllers/export_controller.h"
#include "ui/controllers/follow_controller.h"
#include "ui/controllers/import_controller.h"
#include "ui/controllers/real_run_controller.h"
#include "ui/controllers/run_opener.h"
#include "ui/main_window.h"
#include "ui/models/recent_files.h"
#include "ui/models/shown_source.h"
#include "ui/panels/display_toolbar.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/scenario_panel.h"
#include "ui/panels/welcome_panel.h"
#include "ui/settings/memory_setting.h"
#include "ui/views/heatmap_view.h"

namespace shardlens::ui {

void MainWindow::buildActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open scenario…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), QString(),
                                                      tr("Scenarios (*.json);;All files (*)"));
    if (!path.isEmpty()) openScenario(path);
  });
  file->addAction(tr("&Save scenario"), QKeySequence::Save, this, [this] {
    QString path = m_source->scenarioPath();
    if (path.isEmpty())
      path = QFileDialog::getSaveFileName(
          this, tr("Save scenario"), QStringLiteral("scenario.json"), tr("Scenarios (*.json)"));
    if (!path.isEmpty()) saveScenario(path);
  });
  file->addAction(tr("Save scenario &as…"), QKeySequence::SaveAs, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save scenario as"), m_source->scenarioPath(), tr("Scenarios (*.json)"));
    if (!path.isEmpty()) saveScenario(path);
  });
  file->addAction(tr("Open r&un…"), QKeySequence(tr("Ctrl+Shift+O")), this,
                  [this] {
                    const QString path =
                        QFileDialog::getOpenFileName(this, tr("Open run"), QString(),
                                                     tr("ShardLens runs (*.slrun);;All files (*)"));
                    if (!path.isEmpty()) openRun(path);
                  })
      ->setToolTip(tr("A run recorded by shardlens-cli run or import"));
  file->addAction(tr("&Import dumps…"), QKeySequence(tr("Ctrl+I")), m_import,
                  &ImportController::ask)
      ->setToolTip(tr("Per-rank dumps of your own evaluation (.npz, .npy, .csv, .pt)"));
  file->addAction(tr("&Follow runs folder…"), QKeySequence(tr("Ctrl+Shift+F")), this,
                  [this] {
                    const QString folder = QFileDialog::getExistingDirectory(
                        this, tr("Follow runs folder"), m_follow->folder());
                    if (!folder.isEmpty()) followRuns(folder);
                  })
      ->setToolTip(tr("A training run's folder: each validation's run file is shown as it "
                      "lands, one run the epoch stepper walks"));
  m_stopFollowing = file->addAction(tr("S&top following"), this, &MainWindow::stopFollowing);
  m_stopFollowing->setObjectName(QStringLiteral("stopFollowing"));
  m_stopFollowing->setEnabled(false);
  file->addAction(tr("Compare &with…"), QKeySequence(tr("Ctrl+K")), m_compare,
                  &CompareController::ask)
      ->setToolTip(tr("Another run, epoch or scenario beside this one, with their difference"));
  m_recent = new RecentFiles(file->addMenu(tr("Open &recent")), this);
  file->addSeparator();
  file->addAction(tr("&Export view…"), QKeySequence(tr("Ctrl+E")), this, [this] {
    if (const HeatmapView* view = currentView()) exportView(view);
  });
  file->addAction(tr("Export &figure set…"), QKeySequence(tr("Ctrl+Shift+E")), this, [this] {
    m_export->exportFigureSet(m_source->result(), m_options, m_matrices->figureRanges());
  });
  file->addAction(tr("Export &data (CSV/JSON)…"), QKeySequence(tr("Ctrl+Shift+D")), this,
                  [this] { m_export->exportData(m_source->result()); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(tr("&Copy matrix"), QKeySequence::Copy, this, &MainWindow::copyMatrix)
      ->setToolTip(tr("The focused matrix as tab-separated text with class names, for a "
                      "spreadsheet"));

  QMenu* settings = menuBar()->addMenu(tr("&Settings"));
  settings->addAction(tr("&Memory budget…"), this, &MainWindow::askMemoryBudget)
      ->setToolTip(tr("The most memory opening one run, dump or dataset may take; a file "
                      "that needs more is refused before anything is loaded"));

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("&Reload and recompute"), QKeySequence::Refresh, this, [this] {
    if (m_follow->following()) return m_follow->rescan();  // what landed, read once
    if (showingRun())
      return (void)openRun(m_source->runPath());  // the file may have been rewritten
    m_runner->clearCache();  // the dataset or prediction files may have changed on disk
    recompute();
  });
  // The views' job and the window's tasks; a real run is its dialog's to cancel.
  run->addAction(tr("&Cancel"), QKeySequence(Qt::Key_Escape), m_runner, &EvaluationRunner::cancel);
  run->addAction(tr("Run for r&eal…"), QKeySequence(tr("Ctrl+Shift+G")), this,
                 [this] { m_realRuns->showDialog(m_source->scenario()); })
      ->setToolTip(tr("These settings on real rank processes with a TorchScript model, then "
                      "beside their simulation with the model's predictions"));
  m_simulateRun = run->addAction(tr("&Simulate this run"), this, [this] {
    if (showingRun()) m_compare->simulateRun(m_source->result(), m_source->runPath());
  });
  m_simulateRun->setObjectName(QStringLiteral("simulateThisRun"));
  m_simulateRun->setToolTip(
      tr("The run's recorded settings in the scenario panel, and their "
         "simulation compared with the run, per rank and synced"));
  m_simulateRun->setEnabled(false);
  run->addSeparator();
  // Epochs: the simulation's set_epoch, or the recorded epochs of a run file.
  m_epochActions << run->addAction(tr("&Next epoch"), QKeySequence(tr("Ctrl+Right")), this, [this] {
    showingRun() ? stepRunEpoch(1) : m_panel->stepEpoch(1);
  });
  m_epochActions << run->addAction(
      tr("&Previous epoch"), QKeySequence(tr("Ctrl+Left")), this,
      [this] { showingRun() ? stepRunEpoch(-1) : m_panel->stepEpoch(-1); });
  m_epochActions << run->addAction(tr("&Play epochs"), QKeySequence(tr("Ctrl+P")), this, [this] {
    if (!showingRun()) return m_panel->setPlaying(!m_panel->playing());
    m_runs->togglePlay();
  });

  m_viewMenu = menuBar()->addMenu(tr("&View"));
  m_viewMenu->addAction(tr("&Reset zoom"), QKeySequence(tr("Ctrl+0")), this, [this] {
    for (HeatmapView* v : m_matrices->allViews()) v->resetZoom();
  });
  m_viewMenu->addSeparator();
  for (QDockWidget* d : findChildren<QDockWidget*>()) m_viewMenu->addAction(d->toggleViewAction());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&What am I looking at?"), QKeySequence::HelpContents, this,
                  [this] { m_welcome->show(); });
  help->addAction(tr("&About ShardLens"), this, &MainWindow::about);
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::buildToolbar() {
  m_display = new DisplayToolbar(this);
  addToolBar(m_display);
  m_viewMenu->addSeparator();
  m_viewMenu->addAction(m_display->logAction());
  m_viewMenu->addAction(m_display->valuesAction());
  m_viewMenu->addAction(m_display->fixedRangeAction());
  connect(m_display->fixedRangeAction(), &QAction::toggled, m_matrices,
          &MatrixPanel::setFixedRange);
  connect(m_display, &DisplayToolbar::optionsChanged, this, &MainWindow::setViewOptions);
}

void MainWindow::setViewOptions(const ViewOptions& o) {
  m_options = o;
  m_display->setOptions(o);
  m_matrices->setOptions(o.matrix, o.style);
}

void MainWindow::copyMatrix() {
  auto* focused = qobject_cast<HeatmapView*>(QApplication::focusWidget());
  const HeatmapView* view = focused ? focused : currentView();
  if (!view || view->data().classes == 0) return;
  QApplication::clipboard()->setText(heatmapTsv(view->data()));
  statusBar()->showMessage(tr("Copied %1 as tab-separated text").arg(view->data().title), 3000);
}

}  // namespace shardlens::ui

namespace shardlens::ui {

void MainWindow::askMemoryBudget() {
  bool ok = false;
  const QString text = QInputDialog::getText(
      this, tr("Memory budget"),
      tr("Most memory opening one run file, dump or dataset may take, e.g. 512M or 2G; empty "
         "for the default.\nNow: %1.")
          .arg(memoryBudgetDescription()),
      QLineEdit::Normal, memoryBudgetSetting(), &ok);
  if (!ok) return;
  const QString error = setMemoryBudgetSetting(text);
  if (!error.isEmpty()) return showError(error);
  statusBar()->showMessage(tr("Memory budget: %1").arg(memoryBudgetDescription()), 4000);
}

}  // namespace shardlens::ui

#pragma once
// Helpers shared by the Qt Test suites.
#include <QFile>
#include <QImage>
#include <QTest>
#include <QWidget>

#include "ui/controllers/compare_controller.h"
#include "ui/dialogs/compare_dialog.h"
#include "ui/jobs/evaluation_runner.h"
#include "ui/main_window.h"
#include "ui/models/lesson_model.h"
#include "ui/panels/matrix_panel.h"
#include "ui/panels/run_banner.h"
#include "ui/panels/sample_panel.h"
#include "ui/panels/scenario_panel.h"
#include "ui/panels/welcome_panel.h"
#include "ui/render/heatmap_painter.h"
#include "ui/views/charts.h"

namespace shardlens::ui::test {

// A small synthetic scenario: `classes` classes of `perClass` samples on `world` ranks.
inline Scenario syntheticScenario(const std::string& name, int classes, int64_t perClass, int world,
                                  int64_t batchSize) {
  Scenario s;
  s.name = name;
  s.dataset =
      "synthetic:classes=" + std::to_string(classes) + ",per-class=" + std::to_string(perClass);
  s.sampler.world_size = world;
  s.loader.batch_size = batchSize;
  return s;
}

// Writes a test's input file; false when it could not.
inline bool writeTestFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// Pixels of the mismatch fill in a rendered view: the colour half of the row-sum marker.
inline int mismatchPixels(QWidget* view) {
  const QImage img = view->grab().toImage();
  int n = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x)
      n += (img.pixel(x, y) & 0xffffff) == (render::kMismatchFill & 0xffffff);
  return n;
}

// The window's one `T` (a view, the job runner or a controller), found among its children:
// the window has no getters for what only tests look at.
template <class T>
T* part(const QObject& window) {
  T* found = window.findChild<T*>();
  Q_ASSERT(found);
  return found;
}

// The comparison `start(controller)` opens in the background (Compare with…, Simulate this
// run); null when the window shows an error instead, or nothing happens within `timeoutMs`.
template <class Start>
CompareDialog* comparison(MainWindow& w, Start start, int timeoutMs = 60000) {
  auto* controller = part<CompareController>(w);
  CompareDialog* dialog = nullptr;
  bool failed = false;
  const auto opened = QObject::connect(controller, &CompareController::opened,
                                       [&](CompareDialog* d) { dialog = d; });
  const auto error = QObject::connect(&w, &MainWindow::errorShown, [&] { failed = true; });
  start(*controller);
  (void)QTest::qWaitFor([&] { return dialog || failed; }, timeoutMs);
  QObject::disconnect(opened);
  QObject::disconnect(error);
  return dialog;
}

// Errors go to lastError() instead of a dialog, at a size that shows every view.
inline void showQuietly(MainWindow& w) {
  w.setErrorDialogs(false);
  w.resize(1400, 900);
  w.show();
}

}  // namespace shardlens::ui::test

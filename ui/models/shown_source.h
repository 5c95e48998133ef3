#pragma once
// What the window shows: a simulation of the scenario being edited, or a run file (one of its
// epochs). One object holds the mode and its transitions, so the window never works it out
// from scattered members: the scenario and its file (kept while a run is shown: Back to
// simulation returns to it), the run file on screen, the result on screen and the one last
// asked for (its views may still be prepared). show() is the one path from a result to its
// views: every view, panel and controller that shows a result follows shown(), once.
#include <QObject>
#include <QString>

#include "core/evaluation/scenario.h"
#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

class ShownSource : public QObject {
  Q_OBJECT
 public:
  explicit ShownSource(QObject* parent = nullptr);

  // The scenario simulated, and its file (empty when unsaved or a lesson).
  const Scenario& scenario() const { return m_scenario; }
  const QString& scenarioPath() const { return m_scenarioPath; }
  void setScenario(const Scenario& s) { m_scenario = s; }
  void setScenarioPath(const QString& path) { m_scenarioPath = path; }

  // The run file on screen; empty while a simulation is shown.
  bool showingRun() const { return !m_runPath.isEmpty(); }
  const QString& runPath() const { return m_runPath; }
  // A run of several epochs is shown (they can be stepped and played).
  bool showingEpochs() const;

  // The result on screen, and the one last asked for: the one on screen, or one whose views
  // are being prepared (quick epoch steps add up from it). Null before the first.
  const ResultPtr& result() const { return m_result; }
  const ResultPtr& requested() const { return m_requested; }
  void request(const ResultPtr& result) { m_requested = result; }

  // `result` is on screen (its views are ready): a run file's result shows that run (entered,
  // or another epoch or run), a simulation's leaves a shown run. The mode's signal first
  // (runShown or runLeft), then shown().
  void show(ResultPtr result);
  // Back from a shown run to the simulation (runLeft); false when no run was shown. The
  // caller simulates scenario() again.
  bool leaveRun();
  // The epoch `delta` steps from the one last asked for, wrapping; null unless a run of
  // several epochs is asked for.
  ResultPtr epochAfter(int delta) const;
  // The same from `shown`, sharing the ownership of the run's epochs that `shown` holds.
  static ResultPtr epochAfter(const ResultPtr& shown, int delta);

  // What is shown, by name: the run file's, else the shown result's scenario (comparisons).
  QString shownName() const;
  // The window's title (without the application's name) and file path.
  QString title() const;
  QString filePath() const;

 signals:
  void runShown(const shardlens::ui::ResultPtr& result);
  void runLeft();
  void shown(const shardlens::ui::ResultPtr& result);

 private:
  Scenario m_scenario;
  QString m_scenarioPath;
  QString m_runPath;
  ResultPtr m_result;
  ResultPtr m_requested;
};

}  // namespace shardlens::ui

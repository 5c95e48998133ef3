#pragma once
// Shown above the scenario panel while a run file is on screen: which run it is (source,
// ranks, completeness) and a way back to simulating. The scenario panel below it is
// disabled, because editing a recorded run's settings cannot change what was recorded.
#include <QFrame>

class QLabel;
class QPushButton;
class QToolButton;
class QWidget;

namespace shardlens {
struct Evaluation;
}

namespace shardlens::ui {

class RunBanner : public QFrame {
  Q_OBJECT
 public:
  explicit RunBanner(QWidget* parent = nullptr);
  void setRun(const QString& path, const Evaluation& e);
  QString text() const;           // the banner's first line, "Run file: NAME (…)"
  QString detailsText() const;    // the lines below it
  void setPlaying(bool playing);  // the play button's state

 signals:
  void backToSimulation();
  void stepEpoch(int delta);  // a run of several epochs: previous / next
  void togglePlay();

 private:
  QLabel* m_title;
  QLabel* m_details;
  QPushButton* m_back;
  QWidget* m_epochs;  // previous / next / play, for a run of several epochs
  QToolButton* m_play;
};

}  // namespace shardlens::ui

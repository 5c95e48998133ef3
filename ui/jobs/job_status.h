#pragma once
// The status bar's part for the job runner's views job: its stage, a progress bar and a
// Cancel button, shown while the job runs and hidden when it ends.
#include <QWidget>

class QLabel;
class QProgressBar;

namespace shardlens::ui {

class EvaluationRunner;

class JobStatus : public QWidget {
  Q_OBJECT
 public:
  JobStatus(EvaluationRunner* runner, QWidget* parent = nullptr);

  void setBusy(bool busy);

 private:
  QLabel* m_stage;
  QProgressBar* m_progress;
};

}  // namespace shardlens::ui

#pragma once
// File > Import dumps…: per-rank dumps of the researcher's own evaluation turned into a run
// file, with the CLI's validation and messages (core/runfile/import.h). The import and the save
// run as a task of the job runner; imported() names the run file written, failed() says why
// the dumps were refused (nothing is written then).
#include <QObject>
#include <QString>
#include <QStringList>

class QWidget;

namespace shardlens::ui {

class EvaluationRunner;

class ImportController : public QObject {
  Q_OBJECT
 public:
  // Dialogs open over `window`.
  ImportController(EvaluationRunner* runner, QWidget* window);

  // The dialog: dumps, dataset, classes, then where to save the run.
  void ask();
  // Imports `dumps` into `out` (as shardlens-cli import) in the background; `classes` 0: from
  // the dumps. Returns the task.
  quint64 importDumps(const QStringList& dumps, const QString& dataset, int classes,
                      const QString& out);

 signals:
  void imported(const QString& out);
  void failed(const QString& message);

 private:
  EvaluationRunner* m_runner;
  QWidget* m_window;
};

}  // namespace shardlens::ui

#include "ui/controllers/import_controller.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include "core/realrun/torch_plugin.h"
#include "core/runfile/import.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"
#include "ui/jobs/evaluation_runner.h"

namespace shardlens::ui {

ImportController::ImportController(EvaluationRunner* runner, QWidget* window)
    : QObject(window), m_runner(runner), m_window(window) {
  setObjectName(QStringLiteral("importController"));
}

quint64 ImportController::importDumps(const QStringList& dumps, const QString& dataset, int classes,
                                      const QString& out) {
  ImportOptions options;
  options.dataset = dataset.trimmed().toStdString();
  if (classes > 0) options.classes = classes;
  options.pt_reader = read_pt_dump;
  std::vector<std::string> paths;
  for (const QString& d : dumps) paths.push_back(d.toStdString());
  return m_runner->startTask(
      this, tr("Importing %n dump(s)", nullptr, int(dumps.size())),
      [paths, options, out](JobProgress* progress) {
        const ImportedRun run = import_epochs(paths, options, progress);
        save_run_epochs(run.epochs, out.toStdString());
        return out;
      },
      [this](const QString& written) { emit imported(written); },
      [this](const QString& message) {
        emit failed(tr("Could not import the dumps.\n\n%1").arg(message));
      });
}

void ImportController::ask() {
  QDialog dialog(m_window);
  dialog.setWindowTitle(tr("Import dumps"));
  dialog.setMinimumWidth(640);  // room for dump names and dataset specs
  auto* files = new QLineEdit(&dialog);
  files->setPlaceholderText(tr("eval_epoch0_rank0.npz; eval_epoch0_rank1.npz; …"));
  auto* browse = new QPushButton(tr("Choose…"), &dialog);
  QStringList chosen;
  connect(browse, &QPushButton::clicked, &dialog, [&] {
    chosen = QFileDialog::getOpenFileNames(&dialog, tr("Per-rank dumps"), QString(),
                                           tr("Dumps (*.npz *.npy *.csv *.pt *.pth)"));
    files->setText(chosen.join(QStringLiteral("; ")));
  });
  auto* dataset = new QLineEdit(&dialog);
  dataset->setPlaceholderText(tr("e.g. fashion-mnist:test or fashion-mnist:test,first=1001"));
  dataset->setToolTip(tr("Gives the true class counts and checks the targets (optional)"));
  auto* classes = new QSpinBox(&dialog);
  classes->setRange(0, kMaxClasses);
  classes->setSpecialValueText(tr("from the dumps"));
  auto* fileRow = new QHBoxLayout;
  fileRow->addWidget(files, 1);
  fileRow->addWidget(browse);
  auto* form = new QFormLayout(&dialog);
  form->addRow(tr("Dumps"), fileRow);
  form->addRow(tr("Dataset"), dataset);
  form->addRow(tr("Classes"), classes);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Import…"));
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return;
  QStringList dumps = chosen;
  if (dumps.isEmpty())
    for (const QString& part : files->text().split(QLatin1Char(';'), Qt::SkipEmptyParts))
      dumps << part.trimmed();
  if (dumps.isEmpty()) return emit failed(tr("Choose the per-rank dump files to import."));
  const QString out = QFileDialog::getSaveFileName(
      m_window, tr("Save the imported run"), QFileInfo(dumps.front()).absolutePath() + "/run.slrun",
      tr("ShardLens runs (*.slrun)"));
  if (out.isEmpty()) return;
  importDumps(dumps, dataset->text(), classes->value(), out);
}

}  // namespace shardlens::ui

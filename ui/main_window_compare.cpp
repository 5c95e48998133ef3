// Compare with… and Import dumps…: the researcher's own runs beside each other, and their
// dumps turned into a run file from the desktop, with the CLI's validation and messages.
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include "core/model/limits.h"
#include "core/model/types.h"
#include "core/runfile/import.h"
#include "core/runfile/run_evaluation.h"
#include "core/realrun/torch_plugin.h"
#include "core/sim/engine.h"
#include "ui/compare_dialog.h"
#include "ui/main_window.h"

namespace shardlens::ui {

CompareDialog* MainWindow::compareWith(const QString& other, std::optional<int64_t> epoch,
                                       std::optional<size_t> index) {
  if (!m_result) return nullptr;
  std::shared_ptr<const Evaluation> b;
  QString name = QFileInfo(other).fileName();
  try {
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const std::string path = other.toStdString();
    if (other.endsWith(QLatin1String(".slrun"), Qt::CaseInsensitive)) {
      std::vector<Evaluation> epochs = load_run_evaluations(path);
      const size_t count = epochs.size();
      if (index && *index >= count)
        throw InputError(path + ": holds " + std::to_string(count) + " evaluations");
      Evaluation picked = index   ? std::move(epochs[*index])
                          : epoch ? select_epoch(std::move(epochs), *epoch, path)
                                  : std::move(epochs.front());
      if (count > 1) name += QStringLiteral("@%1").arg(picked.epoch());
      if (count > 1 && (picked.validation() >= 0 || picked.dataloader() >= 0))
        name += QStringLiteral(" (%1)").arg(QString::fromStdString(evaluation_label(picked)));
      b = std::make_shared<const Evaluation>(std::move(picked));
    } else {
      b = std::make_shared<const Evaluation>(simulate(load_scenario_file(path)));
    }
    QApplication::restoreOverrideCursor();
  } catch (const std::exception& e) {
    QApplication::restoreOverrideCursor();
    showError(tr("Could not compare with %1.\n\n%2").arg(name, QString::fromStdString(e.what())));
    return nullptr;
  }
  return compareWithEvaluation(std::move(b), name);
}

CompareDialog* MainWindow::compareWithEvaluation(std::shared_ptr<const Evaluation> b,
                                                 const QString& name) {
  if (!m_result) return nullptr;
  const QString current = m_runPath.isEmpty()
                              ? QString::fromStdString(m_result->eval.scenario().name)
                              : QFileInfo(m_runPath).fileName();
  auto* dialog = new CompareDialog(std::make_shared<const Evaluation>(m_result->eval), current,
                                   std::move(b), name, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  return dialog;
}

void MainWindow::askCompare() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Compare with"), QString(),
      tr("Runs and scenarios (*.slrun *.json);;ShardLens runs (*.slrun);;Scenarios (*.json)"));
  if (path.isEmpty()) return;
  std::optional<size_t> index;
  if (path.endsWith(QLatin1String(".slrun"), Qt::CaseInsensitive)) {
    try {
      const auto runs = load_run_epochs(path.toStdString());
      if (runs.size() > 1) {
        QStringList items;  // "epoch 1, validation 0, dataloader 1": one per evaluation
        for (const RunFile& r : runs) items << QString::fromStdString(run_label(r.meta));
        bool ok = false;
        const QString e = QInputDialog::getItem(
            this, tr("Compare with"), tr("The run holds several evaluations; compare with:"), items,
            0, false, &ok);
        if (!ok) return;
        index = size_t(items.indexOf(e));
      }
    } catch (const std::exception& e) {
      return showError(tr("Could not read %1.\n\n%2")
                           .arg(QFileInfo(path).fileName(), QString::fromStdString(e.what())));
    }
  }
  compareWith(path, std::nullopt, index);
}

bool MainWindow::importDumps(const QStringList& dumps, const QString& dataset, int classes,
                             const QString& out) {
  ImportOptions options;
  options.dataset = dataset.trimmed().toStdString();
  if (classes > 0) options.classes = classes;
  options.pt_reader = read_pt_dump;
  std::vector<std::string> paths;
  for (const QString& d : dumps) paths.push_back(d.toStdString());
  try {
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const ImportedRun run = import_epochs(paths, options);
    save_run_epochs(run.epochs, out.toStdString());
    QApplication::restoreOverrideCursor();
  } catch (const std::exception& e) {
    QApplication::restoreOverrideCursor();
    showError(tr("Could not import the dumps.\n\n%1").arg(QString::fromStdString(e.what())));
    return false;
  }
  openRun(out);
  return true;
}

void MainWindow::askImport() {
  QDialog dialog(this);
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
  if (dumps.isEmpty()) return showError(tr("Choose the per-rank dump files to import."));
  const QString out = QFileDialog::getSaveFileName(
      this, tr("Save the imported run"), QFileInfo(dumps.front()).absolutePath() + "/run.slrun",
      tr("ShardLens runs (*.slrun)"));
  if (out.isEmpty()) return;
  importDumps(dumps, dataset->text(), classes->value(), out);
}

}  // namespace shardlens::ui

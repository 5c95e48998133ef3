// Hostile and broken files in the desktop application: an import or a run file
// that claims more than it holds, or more than the memory budget allows, is refused in a
// dialog naming the file while the evaluation on screen stays as it was; the budget is a
// setting; figures saved into a full or read-only filesystem fail with the reason and keep
// the previous file.
#include <sys/mount.h>

#include <QDir>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cerrno>
#include <cstring>

#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "core/vocabulary/memory_budget.h"
#include "tests/ui/ui_test_util.h"
#include "ui/controllers/import_controller.h"
#include "ui/main_window.h"
#include "ui/render/figures.h"
#include "ui/render/heatmap_source.h"
#include "ui/settings/memory_setting.h"
#include "ui/settings/settings.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::part;
using shardlens::ui::test::showQuietly;

namespace {

Scenario smallScenario() {
  return test::syntheticScenario("small", 5, 20, 2, 10);
}

// An .npy of `count` int64 zeros (the header written by npy_bytes for one value, its shape
// rewritten): a deflated member of 10^7 zeros is 80 MB that compress to ~80 kB.
std::string zerosNpy(int64_t count) {
  std::string bytes = npy_bytes(std::vector<int64_t>{0}, {1});
  const std::string from = "(1,)", to = "(" + std::to_string(count) + ",)";
  bytes.replace(bytes.find(from), from.size(), to);
  bytes.erase(bytes.find('}') + 1, to.size() - from.size());
  bytes.resize(bytes.size() + size_t(count - 1) * 8, '\0');
  return bytes;
}

// The visible message box's text, closing it; empty when none is shown.
QString takeDialogText(QWidget& w) {
  for (QMessageBox* box : w.findChildren<QMessageBox*>()) {
    if (!box->isVisible()) continue;
    const QString text = box->text();
    box->close();
    return text;
  }
  return {};
}

// A tmpfs of 256 KiB mounted on `dir` (root only); the reason when it cannot be.
QString mountSmallTmpfs(const QString& dir) {
  if (::mount("tmpfs", dir.toLocal8Bit().constData(), "tmpfs", 0, "size=256k") != 0)
    return QStringLiteral("cannot mount a tmpfs (%1; needs root)")
        .arg(QString::fromLocal8Bit(std::strerror(errno)));
  return {};
}

}  // namespace

class TestHostileFiles : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    Settings::setMemoryBudget(QString());
    QVERIFY(m_dir.isValid());
  }
  void cleanup() { QVERIFY(setMemoryBudgetSetting(QString()).isEmpty()); }

  // A dump whose index.npy declares far more values than target and prediction. The
  // import is refused in a dialog naming the file; the simulation stays; nothing is written.
  void hostileImportShowsTheMessageAndKeepsTheView() {
    const QString dump = m_dir.filePath(QStringLiteral("hostile_rank0.npz"));
    write_npz(dump.toStdString(),
              {{"index.npy", zerosNpy(10000000)},
               {"target.npy", npy_bytes(std::vector<int64_t>(10, 0), {10})},
               {"prediction.npy", npy_bytes(std::vector<int64_t>(10, 0), {10})}},
              true);
    MainWindow w;
    w.resize(1400, 900);
    w.show();  // with error dialogs, as the user sees them
    QSignalSpy shown(&w, &MainWindow::resultShown);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.setScenario(smallScenario());
    QVERIFY(shown.wait(30000));
    const ResultPtr before = w.result();
    const QString out = m_dir.filePath(QStringLiteral("hostile.slrun"));
    // Refused in the background (the import is a task of the job runner), with a dialog.
    part<ImportController>(w)->importDumps({dump}, QString(), 0, out);
    QVERIFY(errors.wait(30000));
    QCOMPARE(errors.count(), 1);
    const QString text = takeDialogText(w);
    QVERIFY2(text.contains(QStringLiteral("hostile_rank0.npz")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("different lengths (10000000, 10, 10)")),
             qPrintable(text));
    QCOMPARE(w.result(), before);
    QVERIFY(!w.showingRun());
    QVERIFY(!QFile::exists(out));
  }

  // A run file larger than the budget set in Settings: refused before loading, in a dialog
  // with the size and the budget; the run on screen stays.
  void runFileOverTheBudgetIsRefused() {
    RunFile big = run_from_evaluation(simulate(smallScenario()));
    // Rank 0's own records again and again: large, and still what its samples are (a load
    // refuses records that contradict the run's class counts or expected matrix).
    const std::vector<Record> own = big.records.ranks[0];
    for (size_t i = 0; i < 20000; ++i) big.records.ranks[0].push_back(own[i % own.size()]);
    big.per_rank = matrices_from_records(big.records, big.meta.classes, -1);
    big.synced = big.per_rank[0];
    big.synced += big.per_rank[1];
    const QString bigPath = m_dir.filePath(QStringLiteral("big.slrun"));
    save_run_file(big, bigPath.toStdString());
    const QString smallPath = m_dir.filePath(QStringLiteral("small.slrun"));
    save_run_file(run_from_evaluation(simulate(smallScenario())), smallPath.toStdString());

    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QSignalSpy shown(&w, &MainWindow::resultShown);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.openRun(smallPath);
    QVERIFY(shown.wait(30000));
    const ResultPtr before = w.result();
    QVERIFY(setMemoryBudgetSetting(QStringLiteral("64k")).isEmpty());
    QCOMPARE(load_budget(), uint64_t(64) << 10);
    w.openRun(bigPath);
    QVERIFY(errors.wait(30000));
    const QString text = takeDialogText(w);
    QVERIFY2(text.contains(QStringLiteral("big.slrun")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("more than the 64 KiB memory budget")), qPrintable(text));
    QCOMPARE(w.result(), before);
    QVERIFY(w.showingRun());
    // With the default budget back, it opens.
    QVERIFY(setMemoryBudgetSetting(QString()).isEmpty());
    w.openRun(bigPath);
    QVERIFY(shown.wait(30000));
    QVERIFY(w.result() != before);
  }

  // A class name of 100,000 bytes (a payload, not a label) once took the GUI to an abort
  // measuring it. From a run file's meta.json and from a names= file: a dialog naming the
  // file and the name's size; what was on screen stays.
  void aHugeClassNameIsADialogNotAnAbort() {
    const std::string huge(100000, 'b');
    RunFile run = run_from_evaluation(simulate(smallScenario()));
    run.meta.class_names = {"a", huge, "c", "d", "e"};
    const QString runPath = m_dir.filePath(QStringLiteral("huge-name.slrun"));
    save_run_file(run, runPath.toStdString());
    const QString namesPath = m_dir.filePath(QStringLiteral("huge-names.txt"));
    QVERIFY(
        test::writeTestFile(namesPath, QByteArray::fromStdString("a\n" + huge + "\nc\nd\ne\n")));

    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QSignalSpy shown(&w, &MainWindow::resultShown);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.setScenario(smallScenario());
    QVERIFY(shown.wait(30000));
    const ResultPtr before = w.result();

    w.openRun(runPath);
    QVERIFY(errors.wait(30000));
    QString text = takeDialogText(w);
    QVERIFY2(text.contains(QStringLiteral("huge-name.slrun")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("class name 1 has 100000 bytes")), qPrintable(text));
    QCOMPARE(w.result(), before);

    Scenario named = smallScenario();
    named.dataset += ",names=" + namesPath.toStdString();
    w.setScenario(named);
    QVERIFY(errors.wait(30000));
    text = takeDialogText(w);
    QVERIFY2(text.contains(QStringLiteral("huge-names.txt")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("100000 bytes")), qPrintable(text));
    QCOMPARE(w.result(), before);
    QCOMPARE(shown.count(), 1);
  }

  // A run file given at start that cannot be read (here: its expected matrix doctored): a
  // dialog naming the file and the member, over the last scenario rather than empty views.
  void aRunFileThatFailsAtStartLeavesAScenarioBehindTheDialog() {
    RunFile run = run_from_evaluation(simulate(smallScenario()));
    QVERIFY(run.expected.has_value());
    run.expected->at(0, 0) += 7;
    const QString runPath = m_dir.filePath(QStringLiteral("doctored.slrun"));
    save_run_file(run, runPath.toStdString());

    // The last scenario saved by an earlier test (one with a refused names file) would fail
    // too: this window starts from the default one.
    Settings::setLastScenario(QString());
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QSignalSpy shown(&w, &MainWindow::resultShown);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    QVERIFY(w.openFile(runPath));  // a run file: read in the background
    QVERIFY(errors.wait(30000));
    const QString text = takeDialogText(w);
    QVERIFY2(text.contains(QStringLiteral("doctored.slrun")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("expected.npy")), qPrintable(text));
    // The scenario's result may have arrived while the error was awaited.
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() > 0, 30000);
    QVERIFY(w.result());
    QVERIFY(w.result()->eval.provenance.file.empty());  // a simulation, not the file
  }

  void memoryBudgetIsASetting() {
    QVERIFY(!setMemoryBudgetSetting(QStringLiteral("lots")).isEmpty());
    QCOMPARE(load_budget(), default_load_budget());  // a bad value changes nothing
    QVERIFY(setMemoryBudgetSetting(QStringLiteral("2G")).isEmpty());
    QCOMPARE(load_budget(), uint64_t(2) << 30);
    QCOMPARE(Settings::memoryBudget(), QStringLiteral("2G"));
    set_load_budget(0);
    {
      MainWindow w;  // a new window applies the saved setting
      QCOMPARE(load_budget(), uint64_t(2) << 30);
    }
    QVERIFY(setMemoryBudgetSetting(QString()).isEmpty());
    QCOMPARE(load_budget(), default_load_budget());
  }

  // Figures are saved atomically: into a full or read-only filesystem the save fails with
  // the reason, the previous figure stays, and no temporary file is left.
  void figuresOnAFullOrReadOnlyFilesystem() {
    QTemporaryDir mountDir;
    QVERIFY(mountDir.isValid());
    const QString why = mountSmallTmpfs(mountDir.path());
    if (!why.isEmpty()) QSKIP(qPrintable(why));
    struct Unmount {
      QString dir;
      ~Unmount() { ::umount2(dir.toLocal8Bit().constData(), MNT_DETACH); }
    } unmount{mountDir.path()};
    const Evaluation e = simulate(smallScenario());
    render::Figure f;
    f.panels.push_back(render::syncedHeatmap(e, {}));
    QDir dir(mountDir.path());
    for (const auto format :
         {render::FigureFormat::Png, render::FigureFormat::Svg, render::FigureFormat::Pdf}) {
      const QString path =
          dir.filePath(QStringLiteral("synced.") + render::figureExtension(format));
      QString error;
      QVERIFY2(render::writeFigure(f, path, format, 72, &error), qPrintable(error));
    }
    {
      QFile filler(dir.filePath(QStringLiteral("filler")));
      QVERIFY(filler.open(QIODevice::WriteOnly));
      const QByteArray block(4096, '\0');
      while (filler.write(block) == block.size() && filler.flush()) {
      }
    }
    const QStringList namesBefore = dir.entryList(QDir::Files, QDir::Name);
    for (const auto format :
         {render::FigureFormat::Png, render::FigureFormat::Svg, render::FigureFormat::Pdf}) {
      const QString path =
          dir.filePath(QStringLiteral("synced.") + render::figureExtension(format));
      QFile previous(path);
      QVERIFY(previous.open(QIODevice::ReadOnly));
      const QByteArray before = previous.readAll();
      previous.close();
      QString error;
      QVERIFY(!render::writeFigure(f, path, format, 300, &error));
      QVERIFY2(error.startsWith(path + QStringLiteral(": ")), qPrintable(error));
      QVERIFY(previous.open(QIODevice::ReadOnly));
      QCOMPARE(previous.readAll(), before);
      previous.close();
      QCOMPARE(dir.entryList(QDir::Files | QDir::Hidden, QDir::Name), namesBefore);
    }
    // Read-only: the same, with the reason.
    QVERIFY(QFile::remove(dir.filePath(QStringLiteral("filler"))));
    if (::mount("tmpfs", mountDir.path().toLocal8Bit().constData(), "tmpfs", MS_REMOUNT | MS_RDONLY,
                nullptr) != 0)
      QSKIP("cannot remount the tmpfs read-only");
    const QString path = dir.filePath(QStringLiteral("synced.png"));
    QString error;
    QVERIFY(!render::writeFigure(f, path, render::FigureFormat::Png, 72, &error));
    QVERIFY2(error.startsWith(path + QStringLiteral(": ")), qPrintable(error));
    // Qt checks the file before it writes: "Existing file ... is not writable".
    QVERIFY2(error.contains(QStringLiteral("not writable")) ||
                 error.contains(QStringLiteral("Read-only")),
             qPrintable(error));
    QVERIFY(QFile::exists(path));  // the previous figure stays
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestHostileFiles)
#include "test_hostile_files.moc"

// Run for real in a build that cannot run models (here: the LibTorch plugin named by
// SHARDLENS_TORCH_PLUGIN does not exist): the dialog says why as it opens, once, and Run
// stays disabled, so the refusal never comes as a surprise after the click. A process of its
// own: the plugin is looked for once per process.
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

#include "ui/dialogs/real_run_dialog.h"
#include "ui/jobs/evaluation_runner.h"
#include "ui/jobs/real_run_job.h"

using namespace shardlens;
using namespace shardlens::ui;

class TestRealRunRefusal : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    // Before anything asks for the plugin.
    qputenv("SHARDLENS_TORCH_PLUGIN", "/nonexistent/libshardlens_torch.so");
  }

  void runIsDisabledWithTheReasonShown() {
    EvaluationRunner runner;
    Scenario s;
    s.dataset = "fashion-mnist:test,first=300";
    RealRunDialog dialog(s, &runner);
    dialog.show();
    const QString why = dialog.statusText();
    // The plugin that was asked for and that it was not found, said before any click.
    QVERIFY2(why.contains(QStringLiteral("/nonexistent/libshardlens_torch.so")), qPrintable(why));
    QVERIFY2(why.contains(QStringLiteral("could not be loaded")), qPrintable(why));
    QCOMPARE(why.count(QStringLiteral("could not be loaded")), 1);
    QVERIFY2(!why.contains(QStringLiteral("cannot run models"), Qt::CaseInsensitive),
             qPrintable(why));
    QVERIFY(!dialog.runButton()->isEnabled());
    QCOMPARE(dialog.runButton()->toolTip(), why);
    // A click on the disabled button starts nothing and refuses nothing.
    QSignalSpy refused(&dialog, &RealRunDialog::refused);
    QTest::mouseClick(dialog.runButton(), Qt::LeftButton);
    QCOMPARE(refused.size(), 0);
    QVERIFY(!dialog.job()->running());
    // Called anyway (a shortcut, a script), the same reason, once.
    dialog.startRun();
    QCOMPARE(refused.size(), 1);
    QCOMPARE(refused.front().front().toString(), why);
    QVERIFY(!dialog.job()->running());
    // Other settings do not enable it.
    s.sampler.world_size = 2;
    dialog.setScenario(s);
    QVERIFY(!dialog.runButton()->isEnabled());
  }
};

QTEST_MAIN(TestRealRunRefusal)
#include "test_real_run_refusal.moc"

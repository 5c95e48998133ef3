// First start: with no settings the window opens on the seed lesson with the "What you are
// looking at" panel; Close hides it for the session only, "Don't show again" for good, and
// Help brings it back. Lessons are found through resource_dir() (as when installed), not a
// path compiled into ui/.
#include <QAction>
#include <QDir>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/ui/ui_test_util.h"
#include "ui/main_window.h"
#include "ui/models/lesson_model.h"
#include "ui/panels/welcome_panel.h"
#include "ui/settings/settings.h"

using namespace shardlens;
using namespace shardlens::ui;
using shardlens::ui::test::part;

class TestFirstStart : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    // Fresh, private settings: nothing the developer's own settings could leak into.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath("config"));
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.filePath("config"));
    QCoreApplication::setOrganizationName(QStringLiteral("ShardLensFirstStartTest"));
    QCoreApplication::setApplicationName(QStringLiteral("shardlens"));
    QVERIFY(QSettings().allKeys().isEmpty());
    // An "installed" resource tree holding only the seed lesson.
    const QString lessons = m_dir.filePath(QStringLiteral("share/shardlens/lessons"));
    QVERIFY(QDir().mkpath(lessons));
    QVERIFY(QFile::copy(SHARDLENS_LESSON_DIR "/seed-lesson.json", lessons + "/seed-lesson.json"));
    qunsetenv("SHARDLENS_LESSONS_DIR");
    qputenv("SHARDLENS_RESOURCE_DIR", m_dir.filePath(QStringLiteral("share/shardlens")).toUtf8());
  }

  void lessonsComeFromTheResourceDir() {
    QCOMPARE(QDir(LessonModel::defaultDirectory()).canonicalPath(),
             QDir(m_dir.filePath(QStringLiteral("share/shardlens/lessons"))).canonicalPath());
  }

  // No size of the user's yet: the window takes the whole screen, even one larger than its
  // first-start size (here a window made smaller than the offscreen screen), maximised.
  void firstStartTakesTheWholeScreen() {
    QVERIFY(Settings::windowGeometry().isEmpty());
    MainWindow w;
    w.setErrorDialogs(false);
    w.resize(320, 240);
    w.showOnScreen();
    QVERIFY(w.isMaximized());
  }

  void firstStartShowsSeedLessonAndPanel() {
    MainWindow w;
    w.setErrorDialogs(false);
    w.show();
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.restoreSession();
    QVERIFY(shown.wait(30000));
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    QCOMPARE(w.scenario().name, std::string("seed-lesson"));
    QVERIFY(part<WelcomePanel>(w)->isVisible());
    // Close: gone now, back at the next start.
    QTest::mouseClick(
        part<WelcomePanel>(w)->findChild<QPushButton*>(QStringLiteral("welcomeClose")),
        Qt::LeftButton);
    QVERIFY(!part<WelcomePanel>(w)->isVisible());
    QVERIFY(!WelcomePanel::dismissedForGood());
  }

  void dontShowAgainIsRemembered() {
    {
      MainWindow w;
      w.show();
      QVERIFY(part<WelcomePanel>(w)->isVisible());
      QTest::mouseClick(
          part<WelcomePanel>(w)->findChild<QPushButton*>(QStringLiteral("welcomeDontShow")),
          Qt::LeftButton);
      QVERIFY(!part<WelcomePanel>(w)->isVisible());
    }
    QVERIFY(Settings::welcomeDismissed());
    MainWindow second;
    second.show();
    QVERIFY(!part<WelcomePanel>(second)->isVisible());
    // Help > What am I looking at? shows it again on request.
    QAction* help = nullptr;
    for (QAction* a : second.findChildren<QAction*>())
      if (a->text().contains(QStringLiteral("What am I looking at"))) help = a;
    QVERIFY(help);
    help->trigger();
    QVERIFY(part<WelcomePanel>(second)->isVisible());
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestFirstStart)
#include "test_first_start.moc"

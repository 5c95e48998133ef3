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

#include "ui/lesson_model.h"
#include "ui/main_window.h"
#include "ui/welcome_panel.h"

using namespace shardlens;
using namespace shardlens::ui;

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

  void firstStartShowsSeedLessonAndPanel() {
    MainWindow w;
    w.setErrorDialogs(false);
    w.show();
    QSignalSpy shown(&w, &MainWindow::resultShown);
    w.restoreSession();
    QVERIFY(shown.wait(30000));
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    QCOMPARE(w.scenario().name, std::string("seed-lesson"));
    QVERIFY(w.welcome()->isVisible());
    // Close: gone now, back at the next start.
    QTest::mouseClick(w.welcome()->findChild<QPushButton*>(QStringLiteral("welcomeClose")),
                      Qt::LeftButton);
    QVERIFY(!w.welcome()->isVisible());
    QVERIFY(!WelcomePanel::dismissedForGood());
  }

  void dontShowAgainIsRemembered() {
    {
      MainWindow w;
      w.show();
      QVERIFY(w.welcome()->isVisible());
      QTest::mouseClick(w.welcome()->findChild<QPushButton*>(QStringLiteral("welcomeDontShow")),
                        Qt::LeftButton);
      QVERIFY(!w.welcome()->isVisible());
    }
    QVERIFY(QSettings().value(QStringLiteral("welcome/dismissed")).toBool());
    MainWindow second;
    second.show();
    QVERIFY(!second.welcome()->isVisible());
    // Help > What am I looking at? shows it again on request.
    QAction* help = nullptr;
    for (QAction* a : second.findChildren<QAction*>())
      if (a->text().contains(QStringLiteral("What am I looking at"))) help = a;
    QVERIFY(help);
    help->trigger();
    QVERIFY(second.welcome()->isVisible());
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestFirstStart)
#include "test_first_start.moc"

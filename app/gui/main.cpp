// shardlens: the desktop application. Thin: parses the command line and opens the window.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "core/vocabulary/huge_pages.h"
#include "shardlens/config.h"
#include "ui/main_window.h"

int main(int argc, char** argv) {
  shardlens::keep_freed_blocks();  // each setting change makes and frees C x C matrices
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("ShardLens"));
  QApplication::setApplicationName(QStringLiteral("shardlens"));
  QApplication::setApplicationVersion(QStringLiteral(SHARDLENS_VERSION));
  QApplication::setApplicationDisplayName(QStringLiteral("ShardLens"));
  QApplication::setDesktopFileName(QStringLiteral("org.shardlens.ShardLens"));
  QIcon icon;
  icon.addFile(QStringLiteral(":/icons/shardlens-64.png"));
  icon.addFile(QStringLiteral(":/icons/shardlens-256.png"));
  QApplication::setWindowIcon(icon);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("What DDP evaluation does to a confusion matrix, live."));
  parser.addHelpOption();
  parser.addVersionOption();
  // --preset matches shardlens-cli; --lesson reads better for teaching.
  QCommandLineOption lesson({QStringLiteral("preset"), QStringLiteral("lesson")},
                            QStringLiteral("Open a lesson preset by name (e.g. seed-lesson)."),
                            QStringLiteral("name"));
  parser.addOption(lesson);
  QCommandLineOption follow(
      QStringLiteral("follow"),
      QStringLiteral("Follow a training run's folder: each run file (.slrun) that lands there is "
                     "shown as one more validation of one run."),
      QStringLiteral("folder"));
  parser.addOption(follow);
  parser.addPositionalArgument(QStringLiteral("file"),
                               QStringLiteral("Scenario JSON or run file (.slrun) to open."),
                               QStringLiteral("[scenario.json|run.slrun]"));
  parser.process(app);

  shardlens::ui::MainWindow window;
  window.showOnScreen();
  const QStringList files = parser.positionalArguments();
  // A file given: a scenario, or a run file by its .slrun suffix. One that cannot be read
  // is a dialog over the last scenario (a run file's failure arrives later: MainWindow).
  if (parser.isSet(follow))
    window.followRuns(parser.value(follow));  // a folder that cannot be followed: a dialog
  else if (!files.isEmpty()) {
    if (!window.openFile(files.first())) window.restoreSession();
  } else if (parser.isSet(lesson))
    window.loadLesson(parser.value(lesson));
  else
    window.restoreSession();  // the last scenario; the seed lesson on the first start
  return app.exec();
}

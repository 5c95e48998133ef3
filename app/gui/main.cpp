// shardlens: the desktop application. Thin: parses the command line and opens the window.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QSettings>
#include <nlohmann/json.hpp>

#include "core/scenario.h"
#include "shardlens/config.h"
#include "ui/main_window.h"

int main(int argc, char** argv) {
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
  parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("Scenario JSON to open."),
                               QStringLiteral("[scenario.json]"));
  parser.process(app);

  shardlens::ui::MainWindow window;
  window.show();
  const QStringList files = parser.positionalArguments();
  if (!files.isEmpty()) {
    window.openScenario(files.first());
  } else if (parser.isSet(lesson)) {
    window.loadLesson(parser.value(lesson));
  } else {
    // Resume where the user left off; the first start opens the seed lesson.
    const QString last = QSettings().value(QStringLiteral("lastScenario")).toString();
    bool restored = false;
    if (!last.isEmpty()) {
      try {
        window.setScenario(shardlens::scenario_from_json(nlohmann::json::parse(last.toStdString()),
                                                         "saved settings"));
        restored = true;
      } catch (const std::exception&) {
        // A stale or broken saved scenario falls back to the lesson below.
      }
    }
    if (!restored) {
      window.setErrorDialogs(false);  // a missing lesson is not worth a dialog at startup
      if (!window.loadLesson(QStringLiteral("seed-lesson"))) window.setScenario({});
      window.setErrorDialogs(true);
    }
  }
  return app.exec();
}

#pragma once
// Every setting the desktop application keeps between sessions, with its QSettings key:
// nothing else in the GUI spells a key. Typed getters return the default when a value is
// missing or stale, so an old or hand-edited settings file never stops the application.
#include <QByteArray>
#include <QString>
#include <QStringList>

#include "ui/settings/view_options.h"

namespace shardlens::ui {

class Settings {
 public:
  // Open recent: the most recent first, absolute paths, at most kMaxRecentFiles.
  static constexpr int kMaxRecentFiles = 8;
  static QStringList recentFiles();
  static void setRecentFiles(const QStringList& paths);

  // The main window's geometry, dock layout and centre splitter (QMainWindow's own bytes).
  static QByteArray windowGeometry();
  static void setWindowGeometry(const QByteArray& bytes);
  static QByteArray windowState();
  static void setWindowState(const QByteArray& bytes);
  static QByteArray centreSplitter();
  static void setCentreSplitter(const QByteArray& bytes);

  // The display toolbar: normalization, class order, colours, log scale, values on cells.
  static ViewOptions viewOptions();
  static void setViewOptions(const ViewOptions& options);

  // The scenario on screen as JSON, saved on every change (restored at the next start).
  static QString lastScenario();
  static void setLastScenario(const QString& json);

  // Exports: the folder last written into (empty when none) and the PNG resolution.
  static QString exportDir();
  static void setExportDir(const QString& dir);
  static int exportDpi();  // 150 by default
  static void setExportDpi(int dpi);

  // The memory budget for loads as the user typed it ("2G"); empty: the default.
  static QString memoryBudget();
  static void setMemoryBudget(const QString& text);

  // The welcome panel closed for good ("Don't show again").
  static bool welcomeDismissed();
  static void setWelcomeDismissed(bool dismissed);
};

}  // namespace shardlens::ui

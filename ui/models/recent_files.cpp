#include "ui/models/recent_files.h"

#include <QFileInfo>
#include <QMenu>

#include "ui/render/shown_text.h"
#include "ui/settings/settings.h"

namespace shardlens::ui {

RecentFiles::RecentFiles(QMenu* menu, QObject* parent) : QObject(parent), m_menu(menu) {
  setObjectName(QStringLiteral("recentFiles"));
  rebuildMenu();
}

void RecentFiles::add(const QString& path) {
  QStringList recent = Settings::recentFiles();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  Settings::setRecentFiles(recent);  // keeps the first Settings::kMaxRecentFiles
  rebuildMenu();
}

QStringList RecentFiles::paths() const {
  return Settings::recentFiles();
}

void RecentFiles::rebuildMenu() {
  m_menu->clear();
  const QStringList recent = paths();
  for (const QString& path : recent)
    m_menu->addAction(QFileInfo(path).fileName(), this, [this, path] { emit openRequested(path); })
        ->setToolTip(plainToolTip(path));
  m_menu->setEnabled(!recent.isEmpty());
}

}  // namespace shardlens::ui

#pragma once
// File > Open recent: the scenario and run files opened last (Settings::recentFiles), most
// recent first, as the entries of a menu; choosing one asks for it to be opened.
#include <QObject>
#include <QStringList>

class QMenu;

namespace shardlens::ui {

class RecentFiles : public QObject {
  Q_OBJECT
 public:
  // Fills `menu` (owned by the caller) now and after every add().
  explicit RecentFiles(QMenu* menu, QObject* parent = nullptr);

  // `path` first (absolute; moved up when already listed), the oldest dropped past the limit.
  void add(const QString& path);
  QStringList paths() const;

 signals:
  void openRequested(const QString& path);

 private:
  void rebuildMenu();

  QMenu* m_menu;
};

}  // namespace shardlens::ui

#pragma once
// The lesson presets (resources/lessons/*.json): each is a scenario with a title and a short
// explanation of the pitfall it shows.
#include <QAbstractListModel>
#include <QString>
#include <vector>

#include "core/scenario.h"

namespace shardlens::ui {

struct Lesson {
  QString path;
  Scenario scenario;
};

class LessonModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Roles { NameRole = Qt::UserRole + 1, DescriptionRole, PathRole };
  explicit LessonModel(QObject* parent = nullptr);

  // Loads every *.json of the directory; files that fail to parse are skipped and listed in
  // errors() so one broken preset does not hide the others.
  void loadDirectory(const QString& dir);
  static QString defaultDirectory();  // $SHARDLENS_LESSONS_DIR, else resource_dir()/lessons
  const QStringList& errors() const { return m_errors; }
  const Lesson* lesson(int row) const;
  int findByName(const QString& name) const;  // -1 when absent

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

 private:
  std::vector<Lesson> m_lessons;
  QStringList m_errors;
};

}  // namespace shardlens::ui

#pragma once
// The lesson presets (resources/lessons/*.json): each is a scenario with a title and a short
// explanation of the pitfall it shows. A Qt model over core's loader (core/sim/lessons.h),
// which decides the directory, the names, the order and what a broken preset does.
#include <QAbstractListModel>
#include <QString>
#include <QStringList>
#include <vector>

#include "core/sim/lessons.h"

namespace shardlens::ui {

using Lesson = LessonInfo;

class LessonModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Roles { NameRole = Qt::UserRole + 1, DescriptionRole, PathRole };
  explicit LessonModel(QObject* parent = nullptr);

  // Loads the lessons of the directory (load_lessons): broken presets are skipped and listed
  // in errors(), each naming its file, so one of them does not hide the others.
  void loadDirectory(const QString& dir);
  static QString defaultDirectory();  // lessons_dir()
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

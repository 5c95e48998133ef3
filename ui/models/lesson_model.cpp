#include "ui/models/lesson_model.h"

namespace shardlens::ui {

LessonModel::LessonModel(QObject* parent) : QAbstractListModel(parent) {}

QString LessonModel::defaultDirectory() {
  return QString::fromStdString(lessons_dir());
}

void LessonModel::loadDirectory(const QString& dir) {
  LessonList list = load_lessons(dir.toStdString());
  beginResetModel();
  m_lessons = std::move(list.lessons);
  m_errors.clear();
  for (const std::string& e : list.errors) m_errors << QString::fromStdString(e);
  endResetModel();
}

const Lesson* LessonModel::lesson(int row) const {
  return row >= 0 && row < int(m_lessons.size()) ? &m_lessons[size_t(row)] : nullptr;
}

int LessonModel::findByName(const QString& name) const {
  const std::string n = name.toStdString();
  for (size_t i = 0; i < m_lessons.size(); ++i)
    if (m_lessons[i].name == n) return int(i);
  return -1;
}

int LessonModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_lessons.size());
}

QVariant LessonModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Scenario& s = m_lessons[size_t(index.row())].scenario;
  switch (role) {
    case Qt::DisplayRole:
      return QString::fromStdString(s.title.empty() ? s.name : s.title);
    case Qt::ToolTipRole:
    case DescriptionRole:
      return QString::fromStdString(s.description);
    case NameRole:
      return QString::fromStdString(m_lessons[size_t(index.row())].name);
    case PathRole:
      return QString::fromStdString(m_lessons[size_t(index.row())].path);
    default:
      return {};
  }
}

QHash<int, QByteArray> LessonModel::roleNames() const {
  auto roles = QAbstractListModel::roleNames();
  roles[NameRole] = "name";
  roles[DescriptionRole] = "description";
  roles[PathRole] = "path";
  return roles;
}

}  // namespace shardlens::ui

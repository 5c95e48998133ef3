#include "ui/lesson_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <exception>

#include "core/resources.h"

namespace shardlens::ui {

LessonModel::LessonModel(QObject* parent) : QAbstractListModel(parent) {}

QString LessonModel::defaultDirectory() {
  const QString env = qEnvironmentVariable("SHARDLENS_LESSONS_DIR");
  if (!env.isEmpty()) return env;
  // core decides, as for the CLI: $SHARDLENS_RESOURCE_DIR, the installed share/shardlens
  // next to the binary, then the build's source tree.
  return QString::fromStdString(resource_dir()) + QStringLiteral("/lessons");
}

void LessonModel::loadDirectory(const QString& dir) {
  beginResetModel();
  m_lessons.clear();
  m_errors.clear();
  const QStringList files =
      QDir(dir).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
  for (const QString& f : files) {
    const QString path = QDir(dir).filePath(f);
    try {
      Lesson l{path, load_scenario_file(path.toStdString())};
      if (l.scenario.name.empty()) l.scenario.name = QFileInfo(f).completeBaseName().toStdString();
      m_lessons.push_back(std::move(l));
    } catch (const std::exception& e) {
      m_errors << QString::fromStdString(e.what());
    }
  }
  endResetModel();
}

const Lesson* LessonModel::lesson(int row) const {
  return row >= 0 && row < int(m_lessons.size()) ? &m_lessons[size_t(row)] : nullptr;
}

int LessonModel::findByName(const QString& name) const {
  for (size_t i = 0; i < m_lessons.size(); ++i)
    if (QString::fromStdString(m_lessons[i].scenario.name) == name) return int(i);
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
      return QString::fromStdString(s.name);
    case PathRole:
      return m_lessons[size_t(index.row())].path;
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

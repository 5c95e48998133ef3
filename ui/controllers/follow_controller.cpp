#include "ui/controllers/follow_controller.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>

#include "ui/models/shown_source.h"

namespace shardlens::ui {

namespace {

// A notification comes in bursts (a temporary file made, written, renamed): one scan after.
constexpr int kBurstMs = 150;
// Without notifications (network filesystems) the folder is looked at this often.
constexpr int kPollMs = 2000;
// While the runner works on something else, a read file waits this long between looks.
constexpr int kIdleRetryMs = 20;

QString validations(qsizetype n) {
  return n == 1 ? FollowController::tr("1 validation")
                : FollowController::tr("%1 validations").arg(n);
}

}  // namespace

FollowController::FollowController(EvaluationRunner* runner, const ShownSource* shown,
                                   QObject* parent)
    : QObject(parent), m_runner(runner), m_shown(shown) {
  setObjectName(QStringLiteral("followController"));
  m_poll.setInterval(kPollMs);
  m_burst.setInterval(kBurstMs);
  m_burst.setSingleShot(true);
  connect(&m_poll, &QTimer::timeout, this, &FollowController::scan);
  connect(&m_burst, &QTimer::timeout, this, &FollowController::scan);
  connect(&m_watcher, &QFileSystemWatcher::directoryChanged, this, [this] { m_burst.start(); });
  // A validation stepped to is seen; a user who steps back onto the newest follows the
  // landings again.
  connect(m_shown, &ShownSource::shown, this, [this](const ResultPtr& result) {
    if (!following() || m_unseen.empty()) return;
    m_unseen.erase(result.get());
    const ResultPtr newest = m_runs.newest();
    if (newest && result.get() == newest.get()) {
      m_lastShown = newest.get();
      m_unseen.clear();
    }
    setStatus();
  });
}

bool FollowController::follow(const QString& folder) {
  const QFileInfo info(folder);
  if (!info.isDir() || !info.isReadable()) {
    emit failed(tr("Cannot follow %1: it is not a folder that can be read.")
                    .arg(QDir::toNativeSeparators(folder)));
    return false;
  }
  stopQuietly();
  m_runs = FollowedRuns();
  m_files.clear();
  m_lastShown = nullptr;
  m_showNewest = false;
  m_unseen.clear();
  m_reads = 0;
  m_folder = info.absoluteFilePath();
  m_watcher.addPath(m_folder);
  m_poll.start();
  setStatus();
  scan();
  return true;
}

void FollowController::stop() {
  if (!following()) return;
  const QString name = QFileInfo(m_folder).fileName();
  stopQuietly();
  emit stopped(tr("Stopped following %1; the %2 loaded stay.")
                   .arg(name, validations(qsizetype(m_runs.size()))));
}

void FollowController::stopQuietly() {
  if (!following()) return;
  ++m_generation;  // what is being read or waits for the runner is dropped
  if (!m_watcher.directories().isEmpty()) m_watcher.removePaths(m_watcher.directories());
  m_poll.stop();
  m_burst.stop();
  m_queue.clear();
  m_reading = false;
  m_folder.clear();
  setStatus();
}

void FollowController::rescan() {
  scan();
}

void FollowController::scan() {
  if (!following()) return;
  const QFileInfo dir(m_folder);
  if (!dir.isDir()) return folderLost(tr("is gone"));
  if (!dir.isReadable()) return folderLost(tr("cannot be read any more"));
  // A folder made again under the same name is watched again.
  if (!m_watcher.directories().contains(m_folder)) m_watcher.addPath(m_folder);
  // Only finished names: the writers' temporary files end in .tmp-XXXXXXXX, hidden ones are
  // other tools' partial copies.
  QFileInfoList files =
      QDir(m_folder).entryInfoList({QStringLiteral("*.slrun")}, QDir::Files | QDir::Readable);
  // In landing order, as far as the folder tells it.
  std::sort(files.begin(), files.end(), [](const QFileInfo& a, const QFileInfo& b) {
    return std::make_pair(a.lastModified(), a.fileName()) <
           std::make_pair(b.lastModified(), b.fileName());
  });
  const QDateTime now = QDateTime::currentDateTime();
  for (const QFileInfo& f : files) {
    const QString path = f.absoluteFilePath();
    if (path == m_readingPath || std::find(m_queue.begin(), m_queue.end(), path) != m_queue.end())
      continue;
    if (auto it = m_files.find(path); it != m_files.end()) {
      const FileState& s = it->second;
      if (s.notBefore.isValid() && now < s.notBefore) continue;  // being written: later
      const bool same = s.size == f.size() && s.modified == f.lastModified();
      if (same && !s.notBefore.isValid()) continue;  // read (or refused) as it is
    }
    m_queue.push_back(path);
  }
  readNext();
}

void FollowController::readNext() {
  while (!m_reading && !m_queue.empty() && following()) {
    const QString path = m_queue.front();
    m_queue.pop_front();
    const QFileInfo f(path);
    if (!f.exists()) continue;  // gone before its turn
    const FileState read{f.size(), f.lastModified(), {}};
    m_reading = true;
    m_readingPath = path;
    ++m_reads;
    const quint64 generation = m_generation;
    m_runner->startTask(
        this, tr("Reading %1").arg(f.fileName()),
        [path](JobProgress* progress) { return loadFollowedFile(path, progress); },
        [this, generation, read](FollowedFile file) {
          if (generation != m_generation) return;
          m_files[file.path] = read;
          addWhenIdle(generation, std::move(file));
        },
        [this, generation, path, read](const QString& message) {
          readFailed(generation, path, read, message);
        },
        [this, generation] {
          // Cancelled (Esc): the next scan reads it again.
          if (generation != m_generation) return;
          m_reading = false;
          m_readingPath.clear();
          showWhenRead();
        });
  }
}

void FollowController::addWhenIdle(quint64 generation, FollowedFile file) {
  if (generation != m_generation) return;
  // Adding relinks every result in place; no worker may be reading one (followed_runs.h).
  if (m_runner->busy()) {
    QTimer::singleShot(kIdleRetryMs, this, [this, generation, file = std::move(file)]() mutable {
      addWhenIdle(generation, std::move(file));
    });
    return;
  }
  // On the newest (or on nothing of this folder yet): the landing is shown, once the files
  // waiting are read (a folder followed mid-run shows its last, not each in turn).
  const ResultPtr& before = m_shown->requested();
  const ResultPtr newestBefore = m_runs.newest();
  const bool onNewest = !before || !m_runs.holds(before.get()) || before.get() == m_lastShown ||
                        (newestBefore && before.get() == newestBefore.get());
  std::vector<const EvaluationResult*> landed;
  for (const auto& r : file.results) landed.push_back(r.get());
  const size_t brought = m_runs.add(std::move(file));
  m_reading = false;
  m_readingPath.clear();
  if (onNewest) {
    m_showNewest = m_showNewest || brought > 0;
  } else {
    m_showNewest = false;  // the user stepped away meanwhile
    m_unseen.insert(landed.begin(), landed.end());
    // A rewritten file's earlier validations are no longer there to be seen.
    std::erase_if(m_unseen, [this](const EvaluationResult* r) { return !m_runs.holds(r); });
    emit grew();
  }
  setStatus();
  readNext();
  showWhenRead();
}

void FollowController::showWhenRead() {
  if (!m_showNewest || m_reading || !m_queue.empty() || m_runs.empty()) return;
  m_showNewest = false;
  m_unseen.clear();
  const ResultPtr newest = m_runs.newest();
  m_lastShown = newest.get();
  setStatus();
  emit show(newest);
}

void FollowController::readFailed(quint64 generation, const QString& path, const FileState& read,
                                  const QString& message) {
  if (generation != m_generation) return;
  m_reading = false;
  m_readingPath.clear();
  const QFileInfo now(path);
  if (now.exists()) {
    const bool changed = now.size() != read.size || now.lastModified() != read.modified;
    const bool young = read.modified.msecsTo(QDateTime::currentDateTime()) < m_settleMs;
    FileState s{now.size(), now.lastModified(), {}};
    if (changed || young) {
      // Still being written (copied in place rather than renamed): quietly, later.
      s.notBefore = QDateTime::currentDateTime().addMSecs(m_settleMs);
      QTimer::singleShot(m_settleMs + kBurstMs, this, [this, generation] {
        if (generation == m_generation) scan();
      });
    } else {
      emit failed(tr("Could not open the run file %1.\n\n%2").arg(now.fileName(), message));
    }
    m_files[path] = s;  // refused as it is: said once, read again when it changes
  }
  readNext();
  showWhenRead();
}

void FollowController::folderLost(const QString& why) {
  const QString folder = QDir::toNativeSeparators(m_folder);
  stopQuietly();
  emit failed(tr("The followed folder %1 %2: following stopped. The %3 loaded stay.")
                  .arg(folder, why, validations(qsizetype(m_runs.size()))));
}

QString FollowController::statusText() const {
  if (!following()) return {};
  const QString name = QFileInfo(m_folder).fileName();
  if (m_runs.empty()) return tr("Following %1: waiting for the first run file").arg(name);
  QString text = tr("Following %1: %2 loaded").arg(name, validations(qsizetype(m_runs.size())));
  if (unseen() == 1) text += tr("; 1 new validation not shown yet (Ctrl+→ steps)");
  if (unseen() > 1) text += tr("; %1 new validations not shown yet (Ctrl+→ steps)").arg(unseen());
  return text;
}

void FollowController::setStatus() {
  emit statusChanged(statusText());
}

}  // namespace shardlens::ui

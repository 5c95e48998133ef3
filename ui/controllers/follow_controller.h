#pragma once
// File > Follow runs folder…: a training run's folder watched while it trains. Each run file
// the recorder lands there ({stem}.slrun, written to a temporary name and renamed) is read
// once, in a runner task, and joins the followed run (FollowedRuns): the epoch stepper gains
// its validations and the drift its columns. The newest is shown as it lands while the user
// is on the newest; a user who stepped back stays there, told how many are new.
//
// What lands is found by a watch on the folder and, for filesystems that send no
// notifications (network mounts), a slow poll. Only names ending in .slrun are read (the
// writers' temporary files end in .tmp-XXXXXXXX). A file that does not read while it is
// young or still changing is being written (a copy, not a rename): it is tried again
// quietly; one that stays unreadable is the usual error, once per version of the file. A
// folder that goes or becomes unreadable stops the following with a message; what was
// loaded stays.
#include <QDateTime>
#include <QFileSystemWatcher>
#include <QObject>
#include <QString>
#include <QTimer>
#include <deque>
#include <map>
#include <set>
#include <vector>

#include "ui/models/followed_runs.h"

namespace shardlens::ui {

class ShownSource;

class FollowController : public QObject {
  Q_OBJECT
 public:
  // `shown` tells which result the user is on (its requested()).
  FollowController(EvaluationRunner* runner, const ShownSource* shown, QObject* parent = nullptr);

  // Follows `folder` from now on (what it holds already is read first), replacing any folder
  // followed before. False, with failed(), when it is not a readable folder.
  bool follow(const QString& folder);
  // Stops following; what was loaded stays on screen. Nothing when not following.
  void stop();
  bool following() const { return !m_folder.isEmpty(); }
  const QString& folder() const { return m_folder; }
  // Looks at the folder now (Reload, tests) rather than at the next notification or poll.
  void rescan();

  const FollowedRuns& runs() const { return m_runs; }
  // Run files read so far, whether or not they loaded (tests: nothing is read twice).
  int reads() const { return m_reads; }
  // Validations that landed while the user was on an older one, not stepped to yet.
  int unseen() const { return int(m_unseen.size()); }
  // "Following runs/: 5 validations loaded", or empty when not following.
  QString statusText() const;

  // Tests: how often the folder is polled, and how long a file that does not read is taken
  // for one still being written.
  void setPollInterval(int ms) { m_poll.setInterval(ms); }
  void setSettleTime(int ms) { m_settleMs = ms; }

 signals:
  // A landed validation to put on screen (the window's one path to its views).
  void show(const shardlens::ui::ResultPtr& result);
  // Validations landed while the user is on an older one: the run shown has more of them.
  void grew();
  void statusChanged(const QString& text);
  void failed(const QString& message);
  void stopped(const QString& message);

 private:
  // What is known of a run file: the version read (or refused), and when to try again.
  // A version read and refused (no notBefore) is not read again until it changes.
  struct FileState {
    qint64 size = -1;
    QDateTime modified;
    QDateTime notBefore;  // a file being written: its next try
  };
  void stopQuietly();
  void scan();
  void readNext();
  void addWhenIdle(quint64 generation, FollowedFile file);
  void showWhenRead();  // the newest, once nothing waits to be read
  void readFailed(quint64 generation, const QString& path, const FileState& read,
                  const QString& message);
  void folderLost(const QString& why);
  void setStatus();

  EvaluationRunner* m_runner;
  const ShownSource* m_shown;
  FollowedRuns m_runs;
  QString m_folder;
  quint64 m_generation = 0;  // a stop or another folder drops what the earlier one read
  QFileSystemWatcher m_watcher;
  QTimer m_poll;   // the fallback for filesystems without notifications
  QTimer m_burst;  // a notification's burst, scanned once
  int m_settleMs = 2000;
  std::map<QString, FileState> m_files;
  std::deque<QString> m_queue;  // landed or changed, not read yet
  bool m_reading = false;       // one file at a time, in landing order
  QString m_readingPath;
  const EvaluationResult* m_lastShown = nullptr;  // the newest, as this controller showed it
  bool m_showNewest = false;  // landings to show once the files waiting are read
  std::set<const EvaluationResult*> m_unseen;
  int m_reads = 0;
};

}  // namespace shardlens::ui

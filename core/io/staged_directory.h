#pragma once
// An output directory written as one transaction. Every file of every format is written into
// a staging directory first; only when all are complete does commit() put them in place, so
// a failed write, a full disk or a kill leaves the previous output whole:
//  - OUT does not exist: the staging directory is made beside it and renamed to OUT, one
//    atomic step;
//  - OUT exists (it may hold the user's other files): the staging directory is made inside
//    it, on its filesystem, and commit() first checks every place a file goes (no folder on
//    the way is a symbolic link or not a folder, no file replaces a folder: nothing is
//    followed out of OUT), then makes the data durable with one sync and renames each file
//    into place. Only a kill during those renames (a few per thousand files, no data
//    written) can leave some files new and others old.
// The staging directory is named after this process; one left by a process that is gone (a
// kill -9) is removed by the next export to the same place.

#include <functional>
#include <string>

namespace shardlens {

class StagedDirectory {
 public:
  // Creates the staging directory for OUT (after require_output has checked OUT). Throws
  // InputError "OUT: cannot create the staging directory ..." when it cannot.
  explicit StagedDirectory(std::string out);
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;
  // Removes the staging directory and all in it unless committed.
  ~StagedDirectory();

  // Where writers write: the staged image of OUT.
  const std::string& path() const { return m_staging; }
  // The path a staged file will have once committed ("OUT/epoch1/synced.csv").
  std::string final_path(const std::string& staged_path) const;
  // `text` (a writer's error message) with the staged paths it names as their final paths.
  std::string final_text(std::string text) const;
  // Puts every staged file in place under OUT. Throws InputError naming the first place a
  // file cannot go, before any file is moved.
  void commit();
  // Runs `write` (which writes below path()), then commit(); an InputError from the writers
  // names the final paths, not the staged ones.
  void write_and_commit(const std::function<void()>& write);

 private:
  void merge_into_existing();

  std::string m_out;      // as the user spelled it
  std::string m_target;   // OUT absolute, without a trailing slash
  std::string m_staging;  // absolute
  bool m_out_existed = false;
  bool m_committed = false;
};

}  // namespace shardlens

// Tests for StagedDirectory (core/io/staged_directory.h): an export's files are put in place
// all together or not at all, and nothing is written outside --out.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/io/staged_directory.h"
#include "core/vocabulary/types.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

namespace fs = std::filesystem;
using io_test::slurp;
using io_test::TempDir;
using io_test::write_bytes;

// The staging directories under `dir` (and beside it, for a folder named `dir`).
int staging_dirs(const fs::path& dir) {
  int n = 0;
  for (const fs::path& where : {dir, dir.parent_path()}) {
    std::error_code ec;
    for (fs::directory_iterator it(where, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().find(".shardlens-staging-") != std::string::npos) ++n;
  }
  return n;
}

// Writes `files` (relative name, bytes) below the stage's path.
void stage_files(const StagedDirectory& stage,
                 const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, bytes] : files) {
    const fs::path p = fs::path(stage.path()) / name;
    fs::create_directories(p.parent_path());
    write_bytes(p.string(), bytes);
  }
}

TEST(StagedDirectory, ANewFolderAppearsWholeWithTheModeOfANewFolder) {
  TempDir dir;
  const std::string out = dir.path("exp");
  {
    StagedDirectory stage(out);
    EXPECT_FALSE(fs::exists(out));  // staged beside it
    stage_files(stage, {{"synced.csv", "1"}, {"epoch1/report.json", "{}"}});
    EXPECT_EQ(stage.final_path(stage.path() + "/epoch1/report.json"), out + "/epoch1/report.json");
    stage.commit();
  }
  EXPECT_EQ(slurp(out + "/synced.csv"), "1");
  EXPECT_EQ(slurp(out + "/epoch1/report.json"), "{}");
  const mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0777 & ~mask);
  EXPECT_EQ(staging_dirs(out), 0);
}

TEST(StagedDirectory, AnExistingFolderKeepsItsOtherFilesAndGetsTheNewOnes) {
  TempDir dir;
  const std::string out = dir.path("exp");
  fs::create_directories(out + "/epoch1");
  write_bytes(out + "/notes.txt", "mine");
  write_bytes(out + "/synced.csv", "old");
  write_bytes(out + "/epoch1/synced.csv", "old");
  StagedDirectory stage(out);
  stage_files(stage, {{"synced.csv", "new"}, {"epoch1/synced.csv", "new1"}, {"epoch2/a", "2"}});
  stage.commit();
  EXPECT_EQ(slurp(out + "/notes.txt"), "mine");
  EXPECT_EQ(slurp(out + "/synced.csv"), "new");
  EXPECT_EQ(slurp(out + "/epoch1/synced.csv"), "new1");
  EXPECT_EQ(slurp(out + "/epoch2/a"), "2");
  EXPECT_EQ(staging_dirs(out), 0);
}

TEST(StagedDirectory, AFailedWriteReplacesNothingAndLeavesNoStaging) {
  TempDir dir;
  const std::string out = dir.path("exp"), fresh = dir.path("fresh");
  fs::create_directories(out);
  write_bytes(out + "/synced.csv", "old");
  for (const std::string& where : {out, fresh}) {
    StagedDirectory stage(where);
    try {
      stage.write_and_commit([&] {
        stage_files(stage, {{"synced.csv", "new"}});
        throw InputError(stage.path() + "/figure.png: cannot write (No space left on device)");
      });
      ADD_FAILURE() << "the write's failure was swallowed";
    } catch (const InputError& e) {
      // Named by where the file was to go, not where it was staged.
      EXPECT_EQ(std::string(e.what()),
                where + "/figure.png: cannot write (No space left on device)");
    }
  }
  EXPECT_EQ(slurp(out + "/synced.csv"), "old");
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_EQ(staging_dirs(out), 0);
  EXPECT_EQ(staging_dirs(fresh), 0);
}

TEST(StagedDirectory, NothingIsFollowedOutOfTheOutputFolder) {
  TempDir dir;
  const std::string out = dir.path("exp"), elsewhere = dir.path("elsewhere");
  fs::create_directories(out);
  fs::create_directories(elsewhere);
  write_bytes(out + "/synced.csv", "old");
  write_bytes(elsewhere + "/synced.csv", "precious");
  fs::create_directory_symlink(elsewhere, out + "/epoch1");
  StagedDirectory stage(out);
  stage_files(stage, {{"synced.csv", "new"}, {"epoch1/synced.csv", "new"}});
  EXPECT_INPUT_ERROR(stage.commit(), out + "/epoch1: ", "is a symbolic link");
  EXPECT_EQ(slurp(out + "/synced.csv"), "old");  // checked before any file moved
  EXPECT_EQ(slurp(elsewhere + "/synced.csv"), "precious");
  // A link where a file goes is replaced itself; what it points to is untouched.
  fs::remove(out + "/epoch1");
  fs::create_symlink(elsewhere + "/synced.csv", out + "/report.json");
  StagedDirectory again(out);
  stage_files(again, {{"report.json", "{}"}});
  again.commit();
  EXPECT_FALSE(fs::is_symlink(out + "/report.json"));
  EXPECT_EQ(slurp(out + "/report.json"), "{}");
  EXPECT_EQ(slurp(elsewhere + "/synced.csv"), "precious");
}

TEST(StagedDirectory, AFolderWhereAFileGoesIsRefusedBeforeAnyFileMoves) {
  TempDir dir;
  const std::string out = dir.path("exp");
  fs::create_directories(out + "/report.json/inner");
  write_bytes(out + "/synced.csv", "old");
  StagedDirectory stage(out);
  stage_files(stage, {{"synced.csv", "new"}, {"report.json", "{}"}});
  EXPECT_INPUT_ERROR(stage.commit(), out + "/report.json: ", "is a directory");
  EXPECT_EQ(slurp(out + "/synced.csv"), "old");
  EXPECT_TRUE(fs::is_directory(out + "/report.json/inner"));
}

TEST(StagedDirectory, WhatAGoneProcessLeftIsRemovedAndALiveOnesIsKept) {
  TempDir dir;
  const std::string out = dir.path("exp");
  const std::string gone = out + "/.shardlens-staging-2147483647-AbCdEf";
  const std::string live = out + "/.shardlens-staging-" + std::to_string(::getppid()) + "-XyZ123";
  fs::create_directories(gone);
  fs::create_directories(live);
  write_bytes(gone + "/synced.csv", "half");
  StagedDirectory stage(out);
  EXPECT_FALSE(fs::exists(gone));
  EXPECT_TRUE(fs::exists(live));  // another export, still running
}

}  // namespace
}  // namespace shardlens

// Saving into a full filesystem or a read-only directory: every writer fails with
// a message naming the file and the reason, leaves the previous file as it was, and leaves
// no temporary file behind. The filesystems are small tmpfs mounts (root only; skipped with
// the reason otherwise).
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "../common/small_run.h"
#include "core/evaluation/scenario.h"
#include "core/io/files.h"
#include "core/report/export.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

namespace fs = std::filesystem;
using io_test::slurp;
using io_test::TempDir;
using io_test::write_bytes;

// A tmpfs of `kib` KiB mounted on a fresh directory, unmounted at the end.
class SmallFilesystem {
 public:
  explicit SmallFilesystem(size_t kib) {
    const std::string options = "size=" + std::to_string(kib) + "k";
    if (::mount("tmpfs", m_dir.dir().c_str(), "tmpfs", 0, options.c_str()) != 0)
      m_why_not = std::string("cannot mount a tmpfs (") + std::strerror(errno) +
                  "; needs root or CAP_SYS_ADMIN)";
  }
  ~SmallFilesystem() {
    if (m_why_not.empty()) ::umount2(m_dir.dir().c_str(), MNT_DETACH);
  }
  const std::string& why_not() const { return m_why_not; }
  std::string path(const std::string& name) const { return m_dir.path(name); }
  bool make_read_only() {
    return ::mount("tmpfs", m_dir.dir().c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }
  // Fills the filesystem with one file of zeros, so that the next write gets ENOSPC.
  void fill() {
    std::FILE* f = std::fopen(path("filler").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::string block(4096, '\0');
    while (std::fwrite(block.data(), 1, block.size(), f) == block.size()) {
    }
    std::fclose(f);
  }
  // The names in the directory, for "no temporary file left behind".
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(m_dir.dir())) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  TempDir m_dir;
  std::string m_why_not;
};

// What every save must do when it cannot write: an InputError naming the file and the
// reason, the previous file unchanged, no other file left in the directory.
template <typename Save>
void expect_clean_failure(SmallFilesystem& fsys, const std::string& name, const Save& save,
                          const char* reason) {
  const std::string path = fsys.path(name);
  const std::string before = slurp(path);
  const auto names_before = fsys.names();
  const std::string msg = io_test::input_error_of(save);
  EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
  EXPECT_NE(msg.find(reason), std::string::npos) << msg;
  EXPECT_EQ(slurp(path), before) << name << " changed";
  EXPECT_EQ(fsys.names(), names_before) << "a temporary file was left behind";
}

RunFile large_run() {
  RunFile run = test::small_run();
  // Enough records that the file cannot fit in what is left (stored members).
  for (int i = 0; i < 20000; ++i) run.records.ranks[0].push_back({i % 7, 0, 0, 0});
  run.per_rank = matrices_from_records(run.records, 3, -1);
  run.synced = run.per_rank[0];
  run.synced += run.per_rank[1];
  return run;
}

TEST(DiskFull, EverySaveFailsCleanlyAndKeepsThePreviousFile) {
  SmallFilesystem fsys(256);
  if (!fsys.why_not().empty()) GTEST_SKIP() << fsys.why_not();
  // The previous versions, written while there was room.
  save_run_file(test::small_run(), fsys.path("run.slrun"));
  Scenario scenario;
  save_scenario_file(scenario, fsys.path("scenario.json"));
  write_file_atomic(fsys.path("report.json"), "{}\n");
  const Evaluation e = evaluation_from_run(test::small_run(), "small.slrun");
  fs::create_directory(fsys.path("export"));
  export_data(e, fsys.path("export"), {"csv", "npy"});
  const std::string exported = fsys.path("export/synced.csv");
  ASSERT_TRUE(fs::exists(exported));
  fsys.fill();

  const char* full = "No space left on device";
  expect_clean_failure(
      fsys, "run.slrun", [&] { save_run_file(large_run(), fsys.path("run.slrun")); }, "");
  expect_clean_failure(
      fsys, "report.json",
      [&] { write_file_atomic(fsys.path("report.json"), std::string(64 << 10, 'x')); }, full);
  scenario.name = std::string(64 << 10, 'n');
  expect_clean_failure(
      fsys, "scenario.json", [&] { save_scenario_file(scenario, fsys.path("scenario.json")); },
      full);
  const std::string before = slurp(exported);
  EXPECT_THROW(export_data(evaluation_from_run(large_run(), "large.slrun"), fsys.path("export"),
                           {"csv", "npy"}),
               InputError);
  EXPECT_EQ(slurp(exported), before);
  for (const auto& entry : fs::directory_iterator(fsys.path("export")))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
}

TEST(DiskFull, ReadOnlyDirectoriesAreRefusedWithTheReason) {
  SmallFilesystem fsys(256);
  if (!fsys.why_not().empty()) GTEST_SKIP() << fsys.why_not();
  save_run_file(test::small_run(), fsys.path("run.slrun"));
  save_scenario_file(Scenario{}, fsys.path("scenario.json"));
  if (!fsys.make_read_only()) GTEST_SKIP() << "cannot remount the tmpfs read-only";
  const char* ro = "Read-only file system";
  expect_clean_failure(
      fsys, "run.slrun", [&] { save_run_file(large_run(), fsys.path("run.slrun")); }, ro);
  expect_clean_failure(
      fsys, "scenario.json", [&] { save_scenario_file(Scenario{}, fsys.path("scenario.json")); },
      ro);
}

}  // namespace
}  // namespace shardlens

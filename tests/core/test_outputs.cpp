// Outputs never destroy inputs: require_output, the one check every command with
// --out makes before it reads or writes, refuses a device, a FIFO or a socket (an atomic
// write's rename would replace it with a regular file) and an output that is one of the
// inputs, however its path is spelled. The commands themselves: tests/integration/cli_tests.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/io/files.h"
#include "core/report/export.h"
#include "core/sim/engine.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

namespace fs = std::filesystem;
using io_test::TempDir;
using io_test::write_bytes;

std::string refusal(const std::string& out, OutputKind kind,
                    const std::vector<std::string>& inputs = {},
                    const std::function<bool(const std::string&)>& writes = {}) {
  return io_test::input_error_of([&] { require_output(out, kind, inputs, writes); });
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RequireOutput, RefusesACharacterDevice) {
  for (OutputKind kind : {OutputKind::File, OutputKind::Directory}) {
    const std::string msg = refusal("/dev/null", kind);
    EXPECT_EQ(msg.rfind("/dev/null: ", 0), 0u) << msg;
    EXPECT_TRUE(has(msg, "a character device")) << msg;
  }
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(RequireOutput, RefusesAFifoAndASymlinkToOne) {
  TempDir dir;
  const std::string fifo = dir.path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = dir.path("link.slrun");
  fs::create_symlink(fifo, link);
  for (const std::string& out : {fifo, link}) {
    const std::string msg = refusal(out, OutputKind::File);
    EXPECT_EQ(msg.rfind(out + ": ", 0), 0u) << msg;
    EXPECT_TRUE(has(msg, "a FIFO")) << msg;
  }
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(RequireOutput, AFileMustNotBeADirectoryNorADirectoryAFile) {
  TempDir dir;
  const std::string file = dir.path("a.slrun");
  write_bytes(file, "x");
  EXPECT_TRUE(has(refusal(dir.dir().string(), OutputKind::File), "is a directory, not a regular"));
  EXPECT_TRUE(has(refusal(file, OutputKind::Directory), "is a regular file, not a directory"));
  EXPECT_NO_THROW(require_output(file, OutputKind::File, {}));
  EXPECT_NO_THROW(require_output(dir.dir().string(), OutputKind::Directory, {}));
  EXPECT_NO_THROW(require_output(dir.path("new.slrun"), OutputKind::File, {file}));
  EXPECT_NO_THROW(require_output(dir.path("new-dir"), OutputKind::Directory, {file}));
}

TEST(RequireOutput, RefusesAnInputHoweverItsPathIsSpelled) {
  TempDir dir;
  const std::string dump = dir.path("rank0.npz");
  write_bytes(dump, "dump bytes");
  const std::string other = dir.path("rank1.npz");
  write_bytes(other, "other");
  fs::create_directories(dir.path("sub"));
  const std::string link = dir.path("link.npz");
  fs::create_symlink(dump, link);
  const std::string hard = dir.path("hard.npz");
  fs::create_hard_link(dump, hard);
  const std::string dotted = dir.path("sub/../rank0.npz");
  const std::string cwd = fs::current_path().string();
  fs::current_path(dir.dir());
  for (const std::string& out :
       {dump, dotted, link, hard, std::string("rank0.npz"), std::string("./sub/../rank0.npz")}) {
    const std::string msg = refusal(out, OutputKind::File, {other, dump});
    EXPECT_EQ(msg.rfind(out + ": ", 0), 0u) << msg;
    EXPECT_TRUE(has(msg, "the input " + dump)) << msg;
  }
  // The input named through a link or a relative path, the output by its real path.
  EXPECT_TRUE(has(refusal(dump, OutputKind::File, {"link.npz"}), "the input link.npz"));
  EXPECT_TRUE(has(refusal(dump, OutputKind::File, {"sub/../rank0.npz"}), "the input"));
  EXPECT_NO_THROW(require_output("rank2.slrun", OutputKind::File, {dump, other}));
  fs::current_path(cwd);
  EXPECT_EQ(io_test::slurp(dump), "dump bytes");
}

TEST(RequireOutput, RefusesADirectoryThatHoldsAnInputUnderANameItWrites) {
  TempDir dir;
  const std::string out = dir.path("out");
  fs::create_directories(out + "/epoch1");
  const std::string preds = out + "/synced.npy", deep = out + "/epoch1/report.json",
                    kept = out + "/predictions.npy", outside = dir.path("synced.npy");
  for (const std::string& f : {preds, deep, kept, outside}) write_bytes(f, "data");
  const std::string msg = refusal(out, OutputKind::Directory, {preds}, export_writes);
  EXPECT_EQ(msg.rfind(out + ": ", 0), 0u) << msg;
  EXPECT_TRUE(has(msg, "the input " + preds)) << msg;
  EXPECT_TRUE(has(refusal(out, OutputKind::Directory, {deep}, export_writes), deep));
  // A link into the folder is what a write there would replace: refused by its real name.
  const std::string link = dir.path("elsewhere.npy");
  fs::create_symlink(preds, link);
  EXPECT_TRUE(has(refusal(out, OutputKind::Directory, {link}, export_writes), link));
  // Names the export never writes, and files outside the folder, are no concern.
  EXPECT_NO_THROW(require_output(out, OutputKind::Directory, {kept, outside}, export_writes));
}

// export_writes knows every file an export writes (the data formats here; the figures'
// names are per-rank, synced, expected, difference and drift).
TEST(RequireOutput, ExportWritesNamesEveryFileTheExportWrites) {
  TempDir dir;
  Scenario s;
  s.sampler.world_size = 3;
  const Evaluation e = simulate(s);
  const auto written = export_data(e, dir.path("out"), {"csv", "json", "latex", "npy"});
  ASSERT_GT(written.size(), 20u);
  for (const std::string& path : written)
    EXPECT_TRUE(export_writes(fs::path(path).filename().string())) << path;
  for (const char* figure :
       {"per-rank.png", "synced.svg", "expected.pdf", "difference.png", "drift.svg"})
    EXPECT_TRUE(export_writes(figure)) << figure;
  for (const char* other : {"run.slrun", "predictions.npy", "labels.csv", "synced.npz",
                            "per_rank_x.csv", "scenario.json"})
    EXPECT_FALSE(export_writes(other)) << other;
}

}  // namespace
}  // namespace shardlens

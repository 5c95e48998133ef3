// Imports as a user runs them: `import` refuses dumps without records, `diagnose` never calls
// an evaluation of nothing correct, recorded settings are reported, and `simulate --like`
// re-simulates a run with its recorded settings.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "tests/common/run_command.h"

namespace fs = std::filesystem;
using namespace shardlens;
using nlohmann::json;

namespace {

using Result = test::CommandResult;
using Members = std::vector<std::pair<std::string, std::string>>;

fs::path dir() {
  static const fs::path d = [] {
    fs::path p = fs::temp_directory_path() / ("shardlens-cli-import-" + std::to_string(getpid()));
    fs::create_directories(p);
    return p;
  }();
  return d;
}

std::string at(const std::string& name) {
  return (dir() / name).string();
}

Result cli(const std::string& args) {
  return test::run_command(std::string(SHARDLENS_CLI) + " " + args);
}

std::string ints(const std::vector<int64_t>& v) {
  return npy_bytes(v, {int64_t(v.size())});
}
std::string scalar(int64_t v) {
  return npy_bytes(std::vector<int64_t>{v}, {});
}

Scenario scenario() {
  Scenario s;
  s.dataset = "synthetic:classes=3,per-class=7";
  s.predictor = "noisy:accuracy=0.8,seed=4";
  s.sampler.world_size = 2;
  s.sampler.shuffle = true;
  s.sampler.seed = 11;
  s.sampler.epoch = 2;
  s.loader.batch_size = 4;
  return s;
}

// The simulation's ranks as dumps, with settings_json when `with_settings`.
std::string dumps(const std::string& stem, bool with_settings) {
  const Scenario s = scenario();
  const RunFile run = run_from_evaluation(simulate(s));
  std::string paths;
  for (int r = 0; r < 2; ++r) {
    std::vector<int64_t> index, target, prediction;
    for (const Record& rec : run.records.ranks[size_t(r)]) {
      index.push_back(rec.index);
      target.push_back(rec.target);
      prediction.push_back(rec.prediction);
    }
    Members m = {{"index.npy", ints(index)},           {"target.npy", ints(target)},
                 {"prediction.npy", ints(prediction)}, {"rank.npy", scalar(r)},
                 {"world_size.npy", scalar(2)},        {"epoch.npy", scalar(2)}};
    if (with_settings) {
      const std::string text = json{
          {"framework", "lightning"},
          {"sampler", "distributed"},
          {"shuffle", true},
          {"seed", 11},
          {"sampler_epoch", 2},
          {"batch_size", 4},
          {"sampler_drop_last", false},
          {"loader_drop_last", false},
          {"limit_batches", "all"},
          {"world_size", 2},
          {"rank", r},
          {"dataset_size", 21},
          {"epoch", 2},
          {"versions",
           {{"torch", "2.15.0"}}}}.dump();
      m.push_back({"settings_json.npy", npy_bytes(std::vector<uint8_t>(text.begin(), text.end()),
                                                  {int64_t(text.size())})});
    }
    const std::string path = at(stem + "_rank" + std::to_string(r) + ".npz");
    write_npz(path, m);
    paths += " " + path;
  }
  return paths;
}

}  // namespace

TEST(CliImport, EmptyDumpsAreRefusedNamingEachFile) {
  const Members empty = {
      {"index.npy", ints({})}, {"target.npy", ints({})}, {"prediction.npy", ints({})}};
  write_npz(at("empty_rank0.npz"), empty);
  write_npz(at("empty_rank1.npz"), empty);
  const Result r = cli("import " + at("empty_rank0.npz") + " " + at("empty_rank1.npz") + " --out " +
                       at("e.slrun"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find(at("empty_rank0.npz") + ": holds no records"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(at("empty_rank1.npz") + ": holds no records"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("validation_step"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(at("e.slrun")));
}

TEST(CliImport, DiagnoseOfNothingRecordedExitsOne) {
  RunFile run;
  run.meta.source = "imported";
  run.meta.classes = 2;
  run.meta.world_size = 2;
  run.meta.class_counts = {0, 0};
  run.meta.class_counts_source = "distinct-records";
  run.records.ranks.resize(2);
  run.per_rank = {Matrix(2), Matrix(2)};
  run.synced = Matrix(2);
  save_run_file(run, at("nothing.slrun"));
  const Result text = cli("diagnose --run " + at("nothing.slrun"));
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.out.find("NOTHING WAS RECORDED"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("equals"), std::string::npos) << text.out;
  const Result j = cli("diagnose --run " + at("nothing.slrun") + " --format json");
  EXPECT_EQ(j.code, 1);
  const json report = json::parse(j.out);
  EXPECT_FALSE(report["correct"].get<bool>());
  EXPECT_EQ(report["diagnosis"][0]["pattern"], "nothing-recorded");
}

TEST(CliImport, SimulateLikeASavedSimulation) {
  const Result saved =
      cli("simulate --dataset synthetic:classes=3,per-class=7 --world-size 4 --batch-size 2 "
          "--shuffle --seed 3 --epoch 1 --limit-batches 2 --save-run " +
          at("sim.slrun"));
  ASSERT_EQ(saved.code, 0) << saved.err;
  const Result same = cli("simulate --like " + at("sim.slrun"));
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("EQUALS the run, per rank and synced"), std::string::npos) << same.out;
  EXPECT_EQ(cli("diagnose --like " + at("sim.slrun")).code, 0);
  const Result other = cli("simulate --like " + at("sim.slrun") + " --seed 4 --format json");
  EXPECT_EQ(other.code, 1) << other.err;
  const json j = json::parse(other.out);
  EXPECT_FALSE(j["equal"].get<bool>());
  EXPECT_FALSE(j["evaluations"][0]["ranks_equal"].get<bool>());
  EXPECT_NE(j["evaluations"][0]["flags"].get<std::string>().find("--seed 4"), std::string::npos);
}

// `simulate --like` says every setting of the run that is not the default as its flag.
TEST(CliImport, SimulateLikeNamesEverySetting) {
  const Result saved =
      cli("simulate --dataset synthetic:classes=3,per-class=7 --world-size 4 --batch-size 2 "
          "--shuffle --counter-dtype float32 --ignore-index 1 --rank-seeds 1,2,3,4 --save-run " +
          at("settings.slrun"));
  ASSERT_EQ(saved.code, 0) << saved.err;
  const Result like = cli("simulate --like " + at("settings.slrun") + " --format json");
  EXPECT_EQ(like.code, 0) << like.err << like.out;
  const std::string flags = json::parse(like.out)["evaluations"][0]["flags"];
  for (const char* flag : {"--counter-dtype float32", "--ignore-index 1", "--rank-seeds 1,2,3,4"})
    EXPECT_NE(flags.find(flag), std::string::npos) << flag << " not in " << flags;
}

TEST(CliImport, SimulateLikeARecordedRun) {
  const Result imported = cli("import" + dumps("set", true) + " --out " + at("set.slrun"));
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_NE(
      imported.out.find("Recorded settings: lightning, sampler distributed(shuffle=True, seed=11"),
      std::string::npos)
      << imported.out;
  const Result like = cli("simulate --like " + at("set.slrun") + " --format json");
  EXPECT_EQ(like.code, 0) << like.err << like.out;
  const json j = json::parse(like.out);
  EXPECT_TRUE(j["equal"].get<bool>());
  EXPECT_EQ(j["evaluations"][0]["label"], "epoch 2");
  EXPECT_NE(j["evaluations"][0]["flags"].get<std::string>().find("--torch-version 2.15"),
            std::string::npos);

  ASSERT_EQ(cli("import" + dumps("bare", false) + " --out " + at("bare.slrun")).code, 0);
  const Result bare = cli("simulate --like " + at("bare.slrun"));
  EXPECT_EQ(bare.code, 2);
  EXPECT_NE(bare.err.find("records no settings"), std::string::npos) << bare.err;
}

// An epoch of several evaluations (two dataloaders): `compare RUN@E` names them and asks
// for one; RUN@E#K picks it.
TEST(CliImport, CompareNamesTheEvaluationsOfAnEpoch) {
  std::vector<RunFile> loaders;
  for (int k = 0; k < 2; ++k) {
    Scenario s = scenario();
    s.sampler.seed = 11 + k;
    loaders.push_back(run_from_evaluation(simulate(s)));
    loaders.back().meta.epoch = 2;
    loaders.back().meta.dataloader_idx = k;
  }
  save_run_epochs(loaders, at("loaders.slrun"));
  const Result ambiguous =
      cli("compare " + at("loaders.slrun") + "@2 " + at("loaders.slrun") + "@2#1");
  EXPECT_EQ(ambiguous.code, 2);
  EXPECT_NE(ambiguous.err.find("0: epoch 2, dataloader 0; 1: epoch 2, dataloader 1"),
            std::string::npos)
      << ambiguous.err;
  EXPECT_EQ(cli("compare " + at("loaders.slrun") + "@2#1 " + at("loaders.slrun") + "@2#1").code, 0);
  EXPECT_EQ(cli("compare " + at("loaders.slrun") + "@2#0 " + at("loaders.slrun") + "@2#1").code, 1);
}

// Outputs never destroy inputs: a command refuses, before it reads or writes, an
// --out that is one of its inputs (by any spelling of the path) or a device, a FIFO or a
// socket, naming the path and what is wrong; the input and the node are left as they were.
namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A refusal: exit 2, one line naming `path` and `problem`, nothing on stdout.
void expect_refused(const std::string& args, const std::string& path, const std::string& problem) {
  const Result r = cli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(path + ": cannot write"), std::string::npos) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(problem), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace

TEST(CliOutputs, ImportNeverWritesOverADumpItReads) {
  const std::string paths = dumps("own", false);
  const std::string rank0 = at("own_rank0.npz"), rank1 = at("own_rank1.npz");
  const std::string before0 = bytes_of(rank0), before1 = bytes_of(rank1);
  expect_refused("import" + paths + " --out " + rank1, rank1, "it is the input " + rank1);
  // Another spelling of the same file, and a symlink to it.
  const std::string dotted = (dir() / "." / "own_rank0.npz").string();
  expect_refused("import" + paths + " --out " + dotted, dotted, "it is the input");
  const std::string link = at("own-link.slrun");
  fs::remove(link);
  fs::create_symlink(rank0, link);
  expect_refused("import" + paths + " --out " + link, link, "it is the input " + rank0);
  EXPECT_EQ(bytes_of(rank0), before0);
  EXPECT_EQ(bytes_of(rank1), before1);
  // A relative path from the dumps' folder.
  const Result rel = test::run_command("cd " + dir().string() + " && " + SHARDLENS_CLI +
                                       " import own_rank0.npz own_rank1.npz --out own_rank0.npz");
  EXPECT_EQ(rel.code, 2) << rel.err;
  EXPECT_NE(rel.err.find("own_rank0.npz: cannot write: it is the input"), std::string::npos)
      << rel.err;
  EXPECT_EQ(bytes_of(rank0), before0);
  // A new file is written as ever.
  const Result ok = cli("import" + paths + " --out " + at("own.slrun"));
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(CliOutputs, ADeviceOrAFifoIsNeverReplaced) {
  const std::string paths = dumps("dev", false);
  expect_refused("import" + paths + " --out /dev/null", "/dev/null", "a character device");
  expect_refused("simulate --out /dev/null", "/dev/null", "a character device");
  expect_refused("simulate --save-run /dev/null", "/dev/null", "a character device");
  expect_refused("export --out /dev/null", "/dev/null", "a character device");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const std::string fifo = at("out.fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused("import" + paths + " --out " + fifo, fifo, "a FIFO");
  expect_refused("simulate --save-run " + fifo, fifo, "a FIFO");
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(CliOutputs, SimulateAndExportKeepTheirInputs) {
  const Scenario s = scenario();
  const std::string run = at("keep.slrun");
  ASSERT_EQ(cli("simulate --dataset " + s.dataset + " --world-size 2 --save-run " + run).code, 0);
  const std::string run_bytes = bytes_of(run);
  // The run file read and the run file written.
  expect_refused("simulate --run " + run + " --save-run " + run, run, "it is the input");
  expect_refused("simulate --like " + run + " --save-run " + run, run, "it is the input");
  // An input inside the --out folder under a name the export writes.
  const fs::path out = dir() / "keep-out";
  fs::create_directories(out);
  const std::string preds = (out / "synced.npy").string();
  write_file_atomic(preds, ints(std::vector<int64_t>(21, 1)));
  const std::string preds_bytes = bytes_of(preds);
  const std::string flags = " --dataset " + s.dataset + " --predictor npy:" + preds;
  expect_refused("export" + flags + " --out " + out.string(), out.string(), "the input " + preds);
  expect_refused("simulate" + flags + " --out " + out.string(), out.string(), "the input " + preds);
  // The same, the predictor given by a scenario file.
  const std::string preset = at("keep.json");
  std::ofstream(preset) << json{{"dataset", s.dataset}, {"predictor", "npy:" + preds}}.dump();
  expect_refused("export --preset " + preset + " --out " + out.string(), out.string(),
                 "the input " + preds);
  EXPECT_EQ(bytes_of(preds), preds_bytes);
  EXPECT_EQ(bytes_of(run), run_bytes);
  // A name the export does not write is no concern.
  const std::string kept = (out / "predictions.npy").string();
  fs::copy_file(preds, kept, fs::copy_options::overwrite_existing);
  const Result ok = cli("export --dataset " + s.dataset + " --predictor npy:" + kept +
                        " --formats csv --out " + out.string());
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(bytes_of(kept), preds_bytes);
}

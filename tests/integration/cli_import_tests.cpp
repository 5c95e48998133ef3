// Issue 22, as a user runs it: `import` refuses dumps without records, `diagnose` never calls
// an evaluation of nothing correct, recorded settings are reported, and `simulate --like`
// re-simulates a run with its recorded settings.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include <unistd.h>

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

// shardlens-cli as a user runs it: exit codes, messages, outputs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/evaluation/scenario_settings.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/specs.h"
#include "shardlens/config.h"
#include "tests/common/run_command.h"

namespace fs = std::filesystem;

namespace {

using Result = shardlens::test::CommandResult;

fs::path temp_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("shardlens-cli-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

Result run(const std::string& args) {
  return shardlens::test::run_command(std::string(SHARDLENS_CLI) + " " + args);
}

std::string write_npy(const std::string& name, const std::vector<int64_t>& values) {
  const std::string path = (temp_dir() / name).string();
  shardlens::write_file_atomic(path,
                               shardlens::npy_bytes(values, {static_cast<int64_t>(values.size())}));
  return path;
}

std::string write_text(const std::string& name, const std::string& text) {
  const std::string path = (temp_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

// A bad-input run: exit 2, a single line on stderr that contains `needle`.
void expect_bad_input(const std::string& args, const std::string& needle) {
  const Result r = run(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace

TEST(Cli, HelpAndVersion) {
  for (const char* sub :
       {"", "simulate", "shards", "diagnose", "export", "lessons", "run", "import", "compare"}) {
    const Result r = run(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
  }
  const Result v = run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("shardlens-cli"), std::string::npos);
}

// Every command that takes scenario flags lists each of them and every choice in its --help,
// from the one setting table (export --help once left out --sync gather).
TEST(Cli, HelpListsEverySettingAndChoice) {
  for (const char* sub : {"simulate", "shards", "diagnose", "export", "run"}) {
    const Result r = run(std::string(sub) + " --help");
    ASSERT_EQ(r.code, 0) << sub;
    for (const shardlens::ScenarioSetting& s : shardlens::scenario_settings()) {
      for (const std::string& flag : {s.cli_flag, s.cli_off_flag})
        if (!flag.empty()) {
          EXPECT_NE(r.out.find(flag + " "), std::string::npos) << sub << flag;
        }
      if (s.cli_flag.empty()) continue;
      for (const shardlens::SettingChoice& c : s.choices)
        EXPECT_NE(r.out.find(c.name + ": "), std::string::npos) << sub << " " << c.name;
    }
    EXPECT_NE(r.out.find("gather: "), std::string::npos) << sub;
  }
}

TEST(Cli, ShardsJsonMatchesDesignVector) {
  const Result r = run(
      "shards --dataset synthetic:classes=2,per-class=5 --world-size 4 --shuffle --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n"], 10);
  EXPECT_EQ(j["ranks"][2]["indices"], nlohmann::json({7, 0, 4}));
  EXPECT_EQ(j["ranks"][3]["evaluated"], nlohmann::json({5, 8, 1}));
}

// Accelerate's BatchSamplerShard: n=10, W=4, B=2 (the first case of Accelerate's vectors):
// batches dealt round-robin, the last round cycled from the start of the order.
TEST(Cli, ShardsJsonOfAccelerate) {
  Result r =
      run("shards --dataset synthetic:classes=2,per-class=5 --world-size 4 "
          "--batch-size 2 --sampler accelerate --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"][0]["indices"], nlohmann::json({0, 1, 8, 9}));
  EXPECT_EQ(j["ranks"][1]["evaluated"], nlohmann::json({2, 3, 0, 1}));
  EXPECT_EQ(j["ranks"][1]["padding"], nlohmann::json({0, 0, 1, 1}));
  r =
      run("shards --dataset synthetic:classes=2,per-class=5 --world-size 2 --batch-size 4 "
          "--sampler accelerate --split-batches --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["batch_size"], 2);
  EXPECT_EQ(j["ranks"][1]["indices"], nlohmann::json({2, 3, 6, 7, 0, 1}));
  r =
      run("shards --dataset synthetic:classes=2,per-class=5 --world-size 4 --batch-size 2 "
          "--sampler accelerate --no-even-batches --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"][0]["indices"], nlohmann::json({0, 1, 8, 9}));
  EXPECT_EQ(j["ranks"][3]["indices"], nlohmann::json({6, 7}));
  expect_bad_input("shards --world-size 4 --batch-size 6 --sampler accelerate --split-batches",
                   "round multiple");
}

// Accelerate issue 125's shape, end to end: gather counts the cycled padding, gather_for_metrics
// does not; uneven steps report no matrix; metrics are in the JSON report.
TEST(Cli, AccelerateSyncsAndMetrics) {
  const std::string base =
      "--dataset synthetic:counts=20,5 --world-size 4 --batch-size 2 --sampler accelerate ";
  Result r = run("diagnose " + base + "--sync gather --format json");
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["summary"]["reported_total"], 32);
  EXPECT_EQ(j["diagnosis"][0]["pattern"], "plain-gather-padding");
  for (const char* side : {"reported", "expected", "difference"})
    for (const char* key : {"accuracy", "precision", "recall", "f1", "macro_f1", "weighted_f1"})
      EXPECT_TRUE(j["metrics"][side].contains(key)) << side << " " << key;
  EXPECT_EQ(run("diagnose " + base + "--sync gather-for-metrics").code, 0);
  r = run("diagnose " + base + "--no-even-batches --sync gather-for-metrics --format json");
  EXPECT_EQ(r.code, 1) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["synced"].is_null());
  EXPECT_EQ(j["diagnosis"][0]["pattern"], "uneven-steps");
  EXPECT_TRUE(j["metrics"]["reported"].is_null());
  r = run("simulate " + base + "--sync gather");
  EXPECT_NE(r.out.find("Metrics (reported vs expected"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("macro F1"), std::string::npos) << r.out;
}

TEST(Cli, LightningWrapperAndValidations) {
  Result r =
      run("diagnose --dataset synthetic:classes=4,per-class=25 --world-size 4 "
          "--sampler lightning-wrapper --inner-sampler weighted-random "
          "--rank-seeds 1,2,3,4 --format json");
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  bool overlap = false;
  for (const auto& f : j["diagnosis"]) overlap = overlap || f["pattern"] == "wrapper-overlap";
  EXPECT_TRUE(overlap) << r.out;
  // One generator seeded alike: the ranks share one draw, whose repeats are the sampler's.
  r =
      run("diagnose --dataset synthetic:classes=4,per-class=25 --world-size 4 "
          "--sampler lightning-wrapper --inner-sampler weighted-random --seed 5 --format json");
  EXPECT_EQ(r.code, 1) << r.err;
  j = nlohmann::json::parse(r.out);
  std::set<std::string> named;
  for (const auto& f : j["diagnosis"]) named.insert(f["pattern"].get<std::string>());
  EXPECT_EQ(named.count("sampler-with-replacement"), 1u) << r.out;
  for (const char* wrong : {"rank-overlap", "wrapper-overlap", "sanity-leak"})
    EXPECT_EQ(named.count(wrong), 0u) << wrong << ": " << r.out;
  r =
      run("shards --dataset synthetic:classes=2,per-class=5 --world-size 2 "
          "--sampler lightning-wrapper --inner-sampler recorded --inner-indices 9,9,1 "
          "--format json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"][0]["indices"], nlohmann::json({9, 1}));
  EXPECT_EQ(j["ranks"][1]["indices"], nlohmann::json({9, 9}));
  r =
      run("diagnose --dataset synthetic:classes=5,per-class=40 --world-size 4 --shuffle "
          "--batch-size 5 --limit-batches 3 --validations-per-epoch 3 --format json");
  EXPECT_EQ(r.code, 1) << r.err;
  j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["epochs"].size(), 3u);
  EXPECT_EQ(j["epochs"][2]["validation"], 2);
  expect_bad_input(
      "simulate --sampler lightning-wrapper --inner-sampler recorded "
      "--inner-indices 1,x",
      "not a number");
}

TEST(Cli, SimulateJsonHasEveryField) {
  const Result r = run("simulate --preset padding-duplicates --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << "no progress bar when stderr is not a terminal: " << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"classes", "class_counts", "per_rank", "synced", "expected", "row_sums", "diagnosis"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["per_rank"].size(), 4u);
  EXPECT_EQ(j["diagnosis"][0]["pattern"], "padding-duplicates");
  EXPECT_EQ(j["row_sums"]["mismatched"].size(), 2u);
}

TEST(Cli, DiagnoseExitCodes) {
  EXPECT_EQ(run("diagnose --dataset synthetic:classes=10,per-class=50 --world-size 4").code, 0);
  const Result wrong = run("diagnose --preset padding-duplicates");
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.out.find("padding-duplicates"), std::string::npos);
  // A later flag overrides the preset: 510 samples on 2 ranks need no padding.
  EXPECT_EQ(run("diagnose --preset padding-duplicates --world-size 2").code, 0);
}

// The lesson of a right matrix and a wrongly logged accuracy: the logged values are findings,
// and diagnose fails as for any other; logging nothing, the same evaluation passes.
TEST(Cli, DiagnoseReportsAWronglyLoggedAccuracy) {
  const Result r = run("diagnose --preset logged-accuracy-mean");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[logged-accuracy]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.6250"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("accuracy, mean of ranks (sync_dist)"), std::string::npos) << r.out;
  const Result quiet = run("diagnose --preset logged-accuracy-mean --logged-accuracy none");
  EXPECT_EQ(quiet.code, 0) << quiet.out << quiet.err;
  EXPECT_EQ(quiet.out.find("mean of ranks"), std::string::npos) << quiet.out;
}

// The segmentation lesson that logs the mean of its ranks' mIoUs: a right matrix, a wrong
// logged mIoU, and diagnose fails naming both values; logging nothing, it passes.
TEST(Cli, DiagnoseReportsAWronglyLoggedMiou) {
  const Result r = run("diagnose --preset ade20k-rank-mean-miou");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[logged-accuracy]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Logged mIoU is not the mIoU"), std::string::npos) << r.out;
  // The lesson's values, measured with torchmetrics 1.9 (its text quotes them).
  EXPECT_NE(r.out.find("averages to 0.6469, where the mIoU is 0.6456"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("between 0.6313 and 0.6573"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("WRONG LOGGED VALUE"), std::string::npos) << r.out;
  const Result quiet = run("diagnose --preset ade20k-rank-mean-miou --logged-accuracy none");
  EXPECT_EQ(quiet.code, 0) << quiet.out << quiet.err;
  EXPECT_EQ(quiet.out.find("[logged-accuracy]"), std::string::npos) << quiet.out;
}

TEST(Cli, LessonsListsEveryPreset) {
  const Result r = run("lessons --format json");
  ASSERT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j.size(), 16u);
  EXPECT_EQ(j[0]["name"], "seed-lesson");
}

TEST(Cli, OutWritesCsvJsonAndNpy) {
  const fs::path out = temp_dir() / "out";
  const Result r = run("simulate --preset unsynced --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : {"synced.csv", "synced.npy", "synced.json", "expected.csv", "per_rank_3.npy",
                        "report.json"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  const std::string npy = shardlens::read_file_bytes((out / "synced.npy").string());
  std::vector<int64_t> shape;
  const auto cells = shardlens::npy_integers_from_bytes(npy, "synced.npy", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{10, 10}));
  int64_t total = 0;
  for (int64_t v : cells) total += v;
  EXPECT_EQ(total, 125);  // rank 0's share of 500 on 4 ranks
}

TEST(Cli, RecordedLabelsAndPredictions) {
  const std::string labels = write_npy("labels.npy", {0, 1, 2, 0, 1, 2, 0});
  const std::string preds = write_npy("preds.npy", {0, 1, 1, 0, 1, 2, 2});
  const Result r = run("simulate --format json --world-size 2 --dataset npy:" + labels +
                       " --predictor npy:" + preds);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["expected"], nlohmann::json({{2, 0, 1}, {0, 2, 0}, {0, 1, 1}}));
  EXPECT_EQ(j["class_counts"], nlohmann::json({3, 2, 2}));
}

TEST(Cli, BadInputIsOneLineAndExitTwo) {
  expect_bad_input("simulate --sampler random", "--sampler");
  expect_bad_input("simulate --sync twice", "--sync");
  expect_bad_input("simulate --counter-dtype half", "--counter-dtype");
  expect_bad_input("simulate --limit-batches 1.5", "--limit-batches");
  expect_bad_input("simulate --limit-batches 0.001 --dataset synthetic:classes=2,per-class=10",
                   "--limit-batches");
  expect_bad_input("simulate --world-size 0", "--world-size");
  expect_bad_input("simulate --torch-version banana", "--torch-version");
  expect_bad_input("simulate --dataset nosuch:thing", "--dataset");
  expect_bad_input("simulate --dataset npy:/nonexistent/labels.npy", "/nonexistent/labels.npy");
  expect_bad_input("simulate --preset no-such-lesson", "no-such-lesson");
  expect_bad_input("simulate --no-such-flag", "no-such-flag");
  expect_bad_input("simulate --predictor noisy:accuracy=2", "accuracy");
}

TEST(Cli, BadFilesNameTheFile) {
  const std::string labels = write_npy("labels5.npy", {0, 1, 2, 3, 4});
  expect_bad_input("simulate --dataset npy:" + labels + ",classes=3", "labels5.npy");
  const std::string short_preds = write_npy("short.npy", {0, 1});
  expect_bad_input("simulate --dataset npy:" + labels + " --predictor npy:" + short_preds,
                   "short.npy");
  const std::string bad_pred = write_npy("badpred.npy", {0, 1, 9, 0, 1});
  expect_bad_input("simulate --dataset npy:" + labels + " --predictor npy:" + bad_pred,
                   "badpred.npy");
  // A 2-D array is no list of labels or predictions: the error names the shape found.
  const std::string square = (temp_dir() / "square.npy").string();
  shardlens::write_file_atomic(square,
                               shardlens::npy_bytes(std::vector<int64_t>(100, 0), {10, 10}));
  expect_bad_input("simulate --dataset npy:" + square, "square.npy: shape (10, 10)");
  const std::string ten = write_npy("ten.npy", std::vector<int64_t>(100, 0));
  expect_bad_input("simulate --dataset npy:" + ten + " --predictor npy:" + square,
                   "square.npy: shape (10, 10)");
  const std::string garbage = write_text("garbage.npy", "this is not numpy");
  expect_bad_input("simulate --dataset npy:" + garbage, "garbage.npy");
  const std::string csv = write_text("labels.csv", "label\n0\n1\nx\n");
  expect_bad_input("simulate --dataset csv:" + csv, "labels.csv");
  const std::string scenario = write_text("broken.json", "{\"world_size\": 4,");
  expect_bad_input("simulate --preset " + scenario, "broken.json");
  const std::string typo = write_text("typo.json", "{\"world_sise\": 4}");
  expect_bad_input("simulate --preset " + typo, "world_sise");
}

TEST(Cli, FashionMnistWhenInstalled) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  const Result r = run("simulate --dataset fashion-mnist:test --world-size 3 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["class_counts"], nlohmann::json(std::vector<int>(10, 1000)));
  EXPECT_EQ(j["class_names"][9], "Ankle boot");
  EXPECT_EQ(j["diagnosis"][0]["pattern"], "padding-duplicates");  // 10000 % 3 = 1
}

// Two evaluations side by side: equal reports exit 0, different ones 1 with the rows that
// differ (unsynced reports rank 0's local matrix: every row smaller than the all-reduce),
// bad operands 2 with one line naming them.
TEST(Cli, CompareExitCodesAndRows) {
  const Result same = run("compare padding-duplicates padding-duplicates");
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("are equal"), std::string::npos) << same.out;

  const Result differ = run("compare double-sync unsynced --format json");
  ASSERT_EQ(differ.code, 1) << differ.err;
  const auto j = nlohmann::json::parse(differ.out);
  EXPECT_FALSE(j["equal"].get<bool>());
  const auto& a = j["a"]["report"]["synced"];
  const auto& b = j["b"]["report"]["synced"];
  for (size_t r = 0; r < a.size(); ++r)
    for (size_t c = 0; c < a[r].size(); ++c)
      EXPECT_EQ(j["difference"][r][c].get<double>(), b[r][c].get<double>() - a[r][c].get<double>());
  EXPECT_FALSE(j["rows_differing"].empty());

  expect_bad_input("compare padding-duplicates no-such-lesson", "no-such-lesson");
  expect_bad_input("compare padding-duplicates " + write_text("x.slrun", "junk") + "@3", "x.slrun");
  expect_bad_input("compare padding-duplicates seed-lesson@2", "@EPOCH is for run files");
}

namespace {

// A PNG's width and height from its IHDR chunk (bytes 16-19 and 20-23, big-endian).
std::pair<uint32_t, uint32_t> png_size(const fs::path& path) {
  const std::string bytes = shardlens::read_file_bytes(path.string());
  if (bytes.size() < 24) return {0, 0};
  const auto word = [&](int at) {
    uint32_t v = 0;
    for (int i = at; i < at + 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[size_t(i)]);
    return v;
  };
  return {word(16), word(20)};
}

Result run_export_svg(const std::string& run_file, const fs::path& out) {
  return run("export --run " + run_file + " --formats svg --out " + out.string());
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// An export of figures succeeded in a build with Qt (true), or was refused by name in a
// build without it (false: the caller has nothing more to check). Anything else fails.
bool figures_built(const Result& r) {
  if (!SHARDLENS_CLI_HAS_FIGURES) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("no figure renderer"), std::string::npos) << r.err;
    return false;
  }
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0;
}

// Figures alone write only figures; --ranks picks the per-rank panels; --vmax fixes the
// colour range the colour bar prints.
TEST(Cli, ExportFiguresRanksAndRange) {
  const fs::path all = temp_dir() / "figs-all";
  const Result r = run("export --preset padding-duplicates --formats png --out " + all.string());
  if (!figures_built(r)) return;
  EXPECT_EQ(files_in(all), (std::vector<std::string>{"difference.png", "expected.png",
                                                     "per-rank.png", "synced.png"}));
  // Two of the four ranks: one row of two panels, where the four make a 2 x 2 grid as wide.
  const fs::path two = temp_dir() / "figs-two";
  ASSERT_EQ(
      run("export --preset padding-duplicates --formats png --ranks 0,2 --out " + two.string())
          .code,
      0);
  const auto [all_width, all_height] = png_size(all / "per-rank.png");
  const auto [two_width, two_height] = png_size(two / "per-rank.png");
  EXPECT_GT(all_width, 0u);
  EXPECT_EQ(two_width, all_width);
  EXPECT_LT(two_height, all_height * 2 / 3);
  expect_bad_input("export --preset padding-duplicates --formats png --ranks 0,4 --out " +
                       (temp_dir() / "figs-bad").string(),
                   "--ranks: rank 4");
  // The colour bar ends at the largest synced count, or at --vmax when given (no cell of
  // 512 samples in 10 rows of about 51 reaches 100).
  const Result sim = run("simulate --preset padding-duplicates --format json");
  ASSERT_EQ(sim.code, 0) << sim.err;  // simulate reports; only diagnose exits 1
  int64_t top = 0;
  for (const auto& row : nlohmann::json::parse(sim.out)["synced"])
    for (const auto& v : row) top = std::max<int64_t>(top, v.get<int64_t>());
  ASSERT_LT(top, 100);
  const fs::path free_range = temp_dir() / "figs-free";
  const fs::path fixed = temp_dir() / "figs-fixed";
  for (const auto& [dir, flag] : {std::pair{free_range, ""}, std::pair{fixed, " --vmax 100"}}) {
    ASSERT_EQ(run("export --preset padding-duplicates --formats svg" + std::string(flag) +
                  " --out " + dir.string())
                  .code,
              0);
  }
  const std::string free_svg = shardlens::read_file_bytes((free_range / "synced.svg").string());
  const std::string fixed_svg = shardlens::read_file_bytes((fixed / "synced.svg").string());
  EXPECT_NE(free_svg.find(">" + std::to_string(top) + "<"), std::string::npos);
  EXPECT_EQ(free_svg.find(">100<"), std::string::npos);
  EXPECT_NE(fixed_svg.find(">100<"), std::string::npos);
}

// The SVG's document title: the figure's title, as written by the renderer.
std::string svg_title(const fs::path& svg) {
  const std::string text = shardlens::read_file_bytes(svg.string());
  const size_t open = text.find("<title>"), close = text.find("</title>");
  if (open == std::string::npos || close == std::string::npos) return {};
  return text.substr(open + 7, close - open - 7);
}

// Every figure's title and the report say the settings the evaluation had: the padding
// lesson on 64 ranks is no longer "510 samples on 4 ranks", and a shuffled evaluation names
// its epoch, the first one too.
// Pixel counts are drawn on a log scale by default (ADE20K's wall class beside a rare one:
// a linear scale was a dark square), said on the colour bar; --colour-scale linear and
// --log-scale choose for every figure; the two together are refused.
TEST(Cli, ExportColourScaleIsLogForPixelsByDefault) {
  const auto synced_svg = [](const std::string& preset, const std::string& flags) {
    std::string name = "scale-" + preset + flags;
    std::replace(name.begin(), name.end(), ' ', '_');
    const fs::path dir = temp_dir() / name;
    const Result r =
        run("export --preset " + preset + " --formats svg" + flags + " --out " + dir.string());
    EXPECT_EQ(r.code, 0) << r.err;
    return shardlens::read_file_bytes((dir / "synced.svg").string());
  };
  const Result probe = run("export --preset ade20k-batch-limit --formats png --out " +
                           (temp_dir() / "scale-probe").string());
  if (!figures_built(probe)) return;
  EXPECT_NE(synced_svg("ade20k-batch-limit", "").find("pixels, 0–"), std::string::npos);
  EXPECT_NE(synced_svg("ade20k-batch-limit", "").find("log scale"), std::string::npos);
  EXPECT_EQ(synced_svg("ade20k-batch-limit", " --colour-scale linear").find("log scale"),
            std::string::npos);
  EXPECT_EQ(synced_svg("padding-duplicates", "").find("log scale"), std::string::npos);
  EXPECT_NE(synced_svg("padding-duplicates", " --log-scale").find("log scale"), std::string::npos);
  expect_bad_input(
      "export --preset padding-duplicates --formats png --log-scale "
      "--colour-scale linear --out " +
          (temp_dir() / "scale-bad").string(),
      "--log-scale");
}

TEST(Cli, ExportedTitlesFollowTheSettings) {
  const fs::path wide = temp_dir() / "figs-64-ranks";
  const Result r = run("export --preset padding-duplicates --world-size 64 --formats svg --out " +
                       wide.string());
  if (!figures_built(r)) return;
  for (const char* figure : {"synced", "expected", "difference", "per-rank"}) {
    const std::string title = svg_title(wide / (std::string(figure) + ".svg"));
    EXPECT_NE(title.find("padding-duplicates (modified: World size 64)"), std::string::npos)
        << figure << ": " << title;
    EXPECT_EQ(title.find("4 ranks"), std::string::npos) << figure << ": " << title;
    EXPECT_EQ(title.find("epoch"), std::string::npos) << figure << ": " << title;
  }
  const Result report = run("simulate --preset padding-duplicates --world-size 64");
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_EQ(report.out.substr(0, report.out.find('\n')),
            "padding-duplicates (modified: World size 64) — epoch 0");
  // Shuffled and limited, epoch 0: the order is that epoch's, and the titles say so.
  const fs::path shuffled = temp_dir() / "figs-shuffled";
  ASSERT_EQ(run("export --preset padding-duplicates --shuffle --limit-batches 2 --formats svg "
                "--out " +
                shuffled.string())
                .code,
            0);
  const std::string title = svg_title(shuffled / "synced.svg");
  EXPECT_NE(title.find(" — epoch 0"), std::string::npos) << title;
  EXPECT_NE(title.find("Limit batches 2"), std::string::npos) << title;
}

// The epochs of a run share one colour range: the seed lesson's difference jumps from one
// epoch's largest error to another's, and both figures' bars end at the larger.
TEST(Cli, ExportedEpochsShareTheColourRange) {
  std::vector<shardlens::RunFile> epochs;
  double top = 0;
  std::vector<double> own;
  for (int64_t epoch : {1, 2}) {
    shardlens::Scenario s = shardlens::load_preset("seed-lesson");
    s.sampler.epoch = epoch;
    const shardlens::Evaluation e = shardlens::simulate(s);
    double m = 0;
    for (size_t i = 0; i < e.synced->cells.size(); ++i)
      m = std::max(m, std::abs(e.synced->cells[i] - e.expected->cells[i]));
    own.push_back(m);
    top = std::max(top, m);
    epochs.push_back(shardlens::run_from_evaluation(e));
  }
  ASSERT_NE(own[0], own[1]) << "the lesson's epochs should differ for this test to mean much";
  const std::string run = (temp_dir() / "seed-epochs.slrun").string();
  shardlens::save_run_epochs(epochs, run);
  const fs::path out = temp_dir() / "seed-epochs-figs";
  const Result r = run_export_svg(run, out);
  if (!figures_built(r)) return;
  // The difference bar's top end, signed: "+16".
  const std::string bar = ">+" + std::to_string(static_cast<int64_t>(top)) + "<";
  for (const char* epoch : {"epoch1", "epoch2"}) {
    const std::string svg = shardlens::read_file_bytes((out / epoch / "difference.svg").string());
    EXPECT_NE(svg.find(bar), std::string::npos) << epoch << " lacks " << bar;
  }
  // Beside the epochs' folders, the drift of every class's row over the epochs, its colour
  // bar reaching the largest deviation of either epoch.
  const std::string drift = shardlens::read_file_bytes((out / "drift.svg").string());
  EXPECT_NE(drift.find("row sum"), std::string::npos);
  double worst = 0;
  for (const shardlens::RunFile& e : epochs) {
    const auto rows = e.synced.row_sums();
    for (size_t c = 0; c < rows.size(); ++c)
      worst = std::max(worst, std::abs(rows[c] - double(e.meta.class_counts[c])));
  }
  EXPECT_NE(drift.find(">+" + std::to_string(int64_t(worst)) + "<"), std::string::npos)
      << "the drift bar lacks +" << worst;
}

// The `model:` predictor's refusals, in every build: a dataset without inputs; without
// LibTorch (the minimal build), a clear message instead of predictions. Predictions
// themselves are checked against torch in tests/oracle/model_predictor_oracle.py.
TEST(Cli, ModelPredictorRefusals) {
  const Result synthetic =
      run("simulate --dataset synthetic:classes=3,per-class=4 --predictor model:reference");
  EXPECT_EQ(synthetic.code, 2) << synthetic.err;
  EXPECT_NE(synthetic.err.find("no inputs"), std::string::npos) << synthetic.err;
  if (!fs::exists(shardlens::fashion_mnist_dir() + "/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed";
  const std::string cache = (temp_dir() / "prediction-cache").string();
  const std::string out = (temp_dir() / "preds.npy").string();
  // A private cache, so the test neither reads nor fills the user's.
  const Result r =
      shardlens::test::run_command("SHARDLENS_PREDICTION_CACHE=" + cache + " " + SHARDLENS_CLI +
                                   " predict --dataset fashion-mnist:test,first=10"
                                   " --out " +
                                   out);
  if (SHARDLENS_HAS_TORCH) {
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(shardlens::read_npy_integers(out).size(), 10u);
  } else {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("no LibTorch"), std::string::npos) << r.err;
  }
}

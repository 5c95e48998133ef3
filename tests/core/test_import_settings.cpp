// Imports of dumps that hold nothing, the recorder's settings_json, one evaluation per
// (stage, epoch, validation, dataloader), the dataset's length under Lightning's wrapper, and
// a recorded run simulated again with its own settings (recorded_run_scenario).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/report/compare.h"
#include "core/report/report.h"
#include "core/runfile/import.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/recorded_run_simulation.h"
#include "core/sim/specs.h"
#include "core/vocabulary/types.h"

namespace fs = std::filesystem;
using namespace shardlens;
using nlohmann::json;

namespace {

using Members = std::vector<std::pair<std::string, std::string>>;

class ImportSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("shardlens_settings_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  std::string path(const std::string& name) const { return (m_dir / name).string(); }
  std::string dump(const std::string& name, const Members& members) const {
    write_npz(path(name), members);
    return path(name);
  }
  fs::path m_dir;
};

std::string ints(const std::vector<int64_t>& v) {
  return npy_bytes(v, {int64_t(v.size())});
}
std::string scalar(int64_t v) {
  return npy_bytes(std::vector<int64_t>{v}, {});
}
std::string settings(const json& j) {
  const std::string text = j.dump();
  return npy_bytes(std::vector<uint8_t>(text.begin(), text.end()), {int64_t(text.size())});
}

// Rank `rank`'s records of `run` as a dump, with `extra` members.
Members rank_dump(const RunFile& run, int rank, const Members& extra = {}) {
  std::vector<int64_t> index, target, prediction;
  for (const Record& r : run.records.ranks[size_t(rank)]) {
    index.push_back(r.index);
    target.push_back(r.target);
    prediction.push_back(r.prediction);
  }
  Members m = {{"index.npy", ints(index)},
               {"target.npy", ints(target)},
               {"prediction.npy", ints(prediction)},
               {"rank.npy", scalar(rank)},
               {"world_size.npy", scalar(run.meta.world_size)}};
  m.insert(m.end(), extra.begin(), extra.end());
  return m;
}

// A small shuffled DistributedSampler evaluation (every sample evaluated: 20 on 3 ranks).
Scenario small_scenario() {
  Scenario s;
  s.dataset = "synthetic:classes=4,per-class=5";
  s.predictor = "noisy:accuracy=0.7,seed=2";
  s.sampler.world_size = 3;
  s.sampler.shuffle = true;
  s.sampler.seed = 42;
  s.sampler.epoch = 1;
  s.loader.batch_size = 2;
  return s;
}

json lightning_settings(const Scenario& s, int rank) {
  return {{"framework", "lightning"},
          {"sampler", "distributed"},
          {"inner_sampler", nullptr},
          {"shuffle", s.sampler.shuffle},
          {"seed", s.sampler.seed},
          {"sampler_epoch", s.sampler.epoch},
          {"sampler_drop_last", false},
          {"loader_drop_last", false},
          {"batch_size", s.loader.batch_size},
          {"limit_batches", "all"},
          {"sanity_steps", 0},
          {"sanity", false},
          {"stage", "validate"},
          {"dataloader_idx", 0},
          {"validation_in_epoch", 0},
          {"val_check_interval", "1.0"},
          {"world_size", s.sampler.world_size},
          {"rank", rank},
          {"dataset_size", 20},
          {"num_classes", 4},
          {"epoch", s.sampler.epoch},
          {"global_step", 30},
          {"future_key", {1, 2}},
          {"versions", {{"torch", "2.15.0+cpu"}, {"lightning", "2.6.6"}}}};
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// A dump without records is refused, every such file named, with the recorder hint; an
// evaluation of zero records is never "correct".
TEST_F(ImportSettingsTest, NothingRecordedIsRefusedAndNeverCorrect) {
  const Members empty = {{"index.npy", ints({})},
                         {"target.npy", ints({})},
                         {"prediction.npy", ints({})},
                         {"world_size.npy", scalar(2)}};
  const std::string a = dump("val_rank0.npz", empty), b = dump("val_rank1.npz", empty);
  const std::string what = error_of([&] { import_epochs({a, b}, {}); });
  EXPECT_NE(what.find(a + ": holds no records"), std::string::npos) << what;
  EXPECT_NE(what.find(b + ": holds no records"), std::string::npos) << what;
  EXPECT_NE(what.find("validation_step"), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;

  // A run file of zero records (an older import): diagnosed "nothing-recorded", not correct.
  RunFile run;
  run.meta.source = "imported";
  run.meta.classes = 2;
  run.meta.world_size = 2;
  run.meta.class_counts = {0, 0};
  run.meta.class_counts_source = "distinct-records";
  run.records.ranks.resize(2);
  run.per_rank = {Matrix(2), Matrix(2)};
  run.synced = Matrix(2);
  const Evaluation e = evaluation_from_run(run, "empty.slrun");
  EXPECT_FALSE(e.diagnosis.correct);
  ASSERT_EQ(e.diagnosis.findings.size(), 1u);
  EXPECT_EQ(e.diagnosis.findings[0].pattern, Pattern::NothingRecorded);
  const std::string text = report_text(e);
  EXPECT_EQ(text.find("equals"), std::string::npos) << text;
  EXPECT_NE(text.find("NOTHING WAS RECORDED"), std::string::npos) << text;
  EXPECT_FALSE(report_json(e)["correct"].get<bool>());
}

// settings_json is read, checked across ranks, carried into the run file, the reports, and
// back; unknown keys are kept; wrong types and disagreements name the file and the key.
TEST_F(ImportSettingsTest, SettingsAreReadCheckedAndCarried) {
  const Scenario s = small_scenario();
  const RunFile sim = run_from_evaluation(simulate(s));
  std::vector<std::string> paths;
  for (int r = 0; r < 3; ++r)
    paths.push_back(
        dump("val_rank" + std::to_string(r) + ".npz",
             rank_dump(sim, r, {{"settings_json.npy", settings(lightning_settings(s, r))}})));
  ImportedRun imported = import_epochs(paths, {});
  ASSERT_EQ(imported.epochs.size(), 1u);
  const RunFile& run = imported.epochs[0];
  ASSERT_TRUE(run.meta.recorded.has_value());
  EXPECT_EQ(run.meta.recorded->seed, 42);
  EXPECT_EQ(run.meta.recorded->versions.at("torch"), "2.15.0+cpu");
  EXPECT_EQ(run.meta.epoch, 1);
  EXPECT_FALSE(run.meta.validation_in_epoch.has_value());  // one validation: no number
  save_run_epochs(imported.epochs, path("run.slrun"));
  const Evaluation e = load_run_evaluation(path("run.slrun"));
  ASSERT_TRUE(e.meta.recorded.has_value());
  EXPECT_NE(e.meta.recorded->text.find("future_key"), std::string::npos);
  const std::string text = report_text(e);
  EXPECT_NE(text.find("Recorded settings: lightning, sampler distributed(shuffle=True, seed=42"),
            std::string::npos)
      << text;
  const json j = report_json(e);
  EXPECT_EQ(j["recorded_settings"]["seed"], 42);
  EXPECT_EQ(j["label"], "epoch 1");

  // The metric's num_classes counts a class no record shows.
  const std::string six =
      dump("six_rank0.npz", {{"index.npy", ints({0, 1})},
                             {"target.npy", ints({0, 1})},
                             {"prediction.npy", ints({0, 1})},
                             {"settings_json.npy", settings({{"num_classes", 6}})}});
  EXPECT_EQ(import_epochs({six}, {}).epochs[0].meta.classes, 6);

  json bad = lightning_settings(s, 0);
  bad["seed"] = "42";
  const std::string typed =
      dump("typed_rank0.npz", rank_dump(sim, 0, {{"settings_json.npy", settings(bad)}}));
  std::string what = error_of([&] { import_epochs({typed}, {}); });
  EXPECT_NE(what.find("typed_rank0.npz: settings_json: 'seed' must be an integer (is \"42\")"),
            std::string::npos)
      << what;

  json other = lightning_settings(s, 1);
  other["seed"] = 43;
  const std::string differ =
      dump("differ_rank1.npz", rank_dump(sim, 1, {{"settings_json.npy", settings(other)}}));
  what = error_of([&] { import_epochs({paths[0], differ, paths[2]}, {}); });
  EXPECT_NE(what.find("differ_rank1.npz: settings_json 'seed' disagrees"), std::string::npos)
      << what;

  const std::string epoch =
      dump("epoch_rank0.npz", rank_dump(sim, 0,
                                        {{"settings_json.npy", settings(lightning_settings(s, 0))},
                                         {"epoch.npy", scalar(2)}}));
  what = error_of([&] { import_epochs({epoch}, {}); });
  EXPECT_NE(what.find("epoch_rank0.npz: 'epoch' disagrees with settings_json"), std::string::npos)
      << what;
}

// Two validation loaders and two validations in one epoch are four evaluations of one run,
// not one merged evaluation (which would read as ranks that overlap); saved as version 3 and
// read back in order with their labels.
TEST_F(ImportSettingsTest, LoadersAndValidationsAreSeparateEvaluations) {
  const RunFile sim = run_from_evaluation(simulate(small_scenario()));
  std::vector<std::string> paths;
  for (int v = 0; v < 2; ++v)
    for (int loader = 0; loader < 2; ++loader)
      for (int r = 0; r < 3; ++r)
        paths.push_back(dump("val_e0_v" + std::to_string(v) + "_dl" + std::to_string(loader) +
                                 "_rank" + std::to_string(r) + ".npz",
                             rank_dump(sim, r,
                                       {{"epoch.npy", scalar(0)},
                                        {"validation_in_epoch.npy", scalar(v)},
                                        {"dataloader_idx.npy", scalar(loader)}})));
  const ImportedRun imported = import_epochs(paths, {});
  ASSERT_EQ(imported.epochs.size(), 4u);
  save_run_epochs(imported.epochs, path("four.slrun"));
  const std::vector<Evaluation> back = load_run_evaluations(path("four.slrun"));
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(evaluation_label(back[0]), "epoch 0, validation 0, dataloader 0");
  EXPECT_EQ(evaluation_label(back[3]), "epoch 0, validation 1, dataloader 1");
  for (const Evaluation& e : back) {
    EXPECT_EQ(e.synced, sim.synced);
    for (const Finding& f : e.diagnosis.findings)
      EXPECT_NE(f.pattern, Pattern::RankOverlap) << evaluation_label(e);
  }
}

// Under Lightning's DistributedSamplerWrapper the ranks hold num_samples / W records each,
// not a padded DistributedSampler's ceil(len(dataset) / W): dataset_size is the dataset's
// length and the import takes it.
TEST_F(ImportSettingsTest, WrapperRecordCountsDifferFromPadding) {
  const Labels labels = load_labels("synthetic:counts=5,5");
  auto rank = [&](int r, std::vector<int64_t> index) {
    std::vector<int64_t> target;
    for (int64_t i : index) target.push_back(labels.targets[size_t(i)]);
    return dump("wrap_rank" + std::to_string(r) + ".npz", {{"index.npy", ints(index)},
                                                           {"target.npy", ints(target)},
                                                           {"prediction.npy", ints(target)},
                                                           {"rank.npy", scalar(r)},
                                                           {"world_size.npy", scalar(2)},
                                                           {"dataset_size.npy", scalar(10)}});
  };
  // WeightedRandomSampler(num_samples=6) drew 9, 2, 9, 0, 7, 3: r::2 of that list.
  ImportOptions options;
  options.dataset = "synthetic:counts=5,5";
  const ImportedRun run = import_epochs({rank(0, {9, 9, 7}), rank(1, {2, 0, 3})}, options);
  ASSERT_EQ(run.epochs.size(), 1u);
  EXPECT_EQ(run.epochs[0].meta.dataset_size, 10);
  EXPECT_EQ(run.epochs[0].synced.total(), 6);
  const RunFile no_dataset = import_epochs({rank(0, {9, 9, 7}), rank(1, {2, 0, 3})}, {}).epochs[0];
  EXPECT_EQ(no_dataset.meta.dataset_size, 10);
}

// A saved simulation re-simulated like itself is equal per rank and synced.
TEST_F(ImportSettingsTest, SimulatedRunLikeItselfIsEqual) {
  Scenario s = small_scenario();
  s.loader.limit = BatchLimit::parse("2");
  save_run_file(run_from_evaluation(simulate(s)), path("sim.slrun"));
  const std::vector<Evaluation> runs = load_run_evaluations(path("sim.slrun"));
  const RecordedRunScenario like = recorded_run_scenario(runs, 0, "sim.slrun");
  EXPECT_TRUE(like.unrecorded.empty());
  const Evaluation again = simulate_recorded_run(
      like.scenario, runs[0], recorded_run_inputs(runs[0], like.scenario, true, "sim.slrun"));
  const Comparison c = compare_evaluations(runs[0], again);
  EXPECT_TRUE(c.equal);
  EXPECT_TRUE(c.ranks_equal());
}

// An imported run with settings_json: its settings and its own predictions reproduce it; a
// different seed does not; a run without settings says so.
TEST_F(ImportSettingsTest, RecordedRunLikeItsSettings) {
  const Scenario s = small_scenario();
  const RunFile sim = run_from_evaluation(simulate(s));
  std::vector<std::string> with, without;
  for (int r = 0; r < 3; ++r) {
    with.push_back(
        dump("with_rank" + std::to_string(r) + ".npz",
             rank_dump(sim, r, {{"settings_json.npy", settings(lightning_settings(s, r))}})));
    without.push_back(dump("without_rank" + std::to_string(r) + ".npz", rank_dump(sim, r)));
  }
  save_run_epochs(import_epochs(with, {}).epochs, path("with.slrun"));
  const std::vector<Evaluation> runs = load_run_evaluations(path("with.slrun"));
  RecordedRunScenario like = recorded_run_scenario(runs, 0, "with.slrun");
  EXPECT_TRUE(like.unrecorded.empty());
  EXPECT_EQ(like.scenario.sampler.torch.to_string(), "2.15");
  EXPECT_EQ(like.scenario.sampler.seed, 42);
  const auto inputs = recorded_run_inputs(runs[0], like.scenario, false, "with.slrun");
  Comparison c =
      compare_evaluations(runs[0], simulate_recorded_run(like.scenario, runs[0], inputs));
  EXPECT_TRUE(c.equal && c.ranks_equal()) << c.cells_differing;
  like.scenario.sampler.seed = 7;
  c = compare_evaluations(runs[0], simulate_recorded_run(like.scenario, runs[0], inputs));
  EXPECT_FALSE(c.ranks_equal());

  save_run_epochs(import_epochs(without, {}).epochs, path("without.slrun"));
  const std::vector<Evaluation> bare = load_run_evaluations(path("without.slrun"));
  const std::string what = error_of([&] { recorded_run_scenario(bare, 0, "without.slrun"); });
  EXPECT_NE(what.find("without.slrun: records no settings"), std::string::npos) << what;
}

// Lightning's num_sanity_val_steps=-1 (every batch, which the recorder writes as -1) imports,
// and a run simulated like it plays every batch as its sanity check; -2 is refused, named.
TEST_F(ImportSettingsTest, EveryBatchSanityStepsImport) {
  const Scenario s = small_scenario();
  const RunFile sim = run_from_evaluation(simulate(s));
  std::vector<std::string> every, wrong;
  for (int r = 0; r < 3; ++r) {
    json j = lightning_settings(s, r);
    j["sanity_steps"] = -1;
    every.push_back(dump("every_rank" + std::to_string(r) + ".npz",
                         rank_dump(sim, r, {{"settings_json.npy", settings(j)}})));
    j["sanity_steps"] = -2;
    wrong.push_back(dump("wrong_rank" + std::to_string(r) + ".npz",
                         rank_dump(sim, r, {{"settings_json.npy", settings(j)}})));
  }
  save_run_epochs(import_epochs(every, {}).epochs, path("every.slrun"));
  const std::vector<Evaluation> runs = load_run_evaluations(path("every.slrun"));
  const RecordedRunScenario like = recorded_run_scenario(runs, 0, "every.slrun");
  // More sanity steps than the 4 batches a rank has: every batch.
  EXPECT_GT(like.scenario.loader.sanity_steps, 4);
  const std::string what = error_of([&] { import_epochs(wrong, {}); });
  EXPECT_NE(what.find("'sanity_steps' must be at least -1 (is -2)"), std::string::npos) << what;
}

// A version-3 file whose list disagrees with its evaluations, or repeats one, is refused; a
// run of plain epochs stays version 2 even when every dump says stage "validate".
TEST_F(ImportSettingsTest, MalformedEvaluationListsAreRefused) {
  const RunFile sim = run_from_evaluation(simulate(small_scenario()));
  std::vector<RunFile> evaluations;
  for (int loader = 0; loader < 2; ++loader) {
    RunFile r = sim;
    r.meta.epoch = 0;
    r.meta.dataloader_idx = loader;
    evaluations.push_back(r);
  }
  auto members = run_epochs_members(evaluations);
  json top = json::parse(members.back().second);
  EXPECT_EQ(top["format_version"], kRunFormatVersionEvaluations);
  std::swap(top["evaluations"][0]["dataloader_idx"], top["evaluations"][1]["dataloader_idx"]);
  members.back().second = top.dump();
  write_npz(path("swapped.slrun"), members);
  std::string what = error_of([&] { load_run_epochs(path("swapped.slrun")); });
  EXPECT_NE(what.find("swapped.slrun: evaluation 0"), std::string::npos) << what;
  std::swap(evaluations[0], evaluations[1]);
  what = error_of([&] { run_epochs_members(evaluations); });
  EXPECT_NE(what.find("not in increasing order"), std::string::npos) << what;

  std::vector<RunFile> epochs;
  for (int e = 0; e < 2; ++e) {
    RunFile r = sim;
    r.meta.epoch = e;
    r.meta.stage = "validate";
    epochs.push_back(r);
  }
  const auto plain = run_epochs_members(epochs);
  EXPECT_EQ(json::parse(plain.back().second)["format_version"], kRunFormatVersionEpochs);
}

// What the run did not record is listed with the flag that supplies it; the predictions and
// labels of samples the run never evaluated are needed only by a simulation that evaluates
// them, which names --predictor and --dataset.
TEST_F(ImportSettingsTest, LikeNamesWhatIsMissing) {
  Scenario s = small_scenario();
  s.loader.limit = BatchLimit::parse("1");  // 6 of 20 samples evaluated
  const RunFile sim = run_from_evaluation(simulate(s));
  json partial = {
      {"sampler", "wrapper"}, {"inner_sampler", "other"}, {"shuffle", true}, {"seed", nullptr}};
  std::vector<std::string> paths;
  for (int r = 0; r < 3; ++r)
    paths.push_back(dump("p_rank" + std::to_string(r) + ".npz",
                         rank_dump(sim, r, {{"settings_json.npy", settings(partial)}})));
  save_run_epochs(import_epochs(paths, {}).epochs, path("partial.slrun"));
  const std::vector<Evaluation> runs = load_run_evaluations(path("partial.slrun"));
  const RecordedRunScenario like = recorded_run_scenario(runs, 0, "partial.slrun");
  std::vector<std::string> flags;
  for (const UnrecordedSetting& u : like.unrecorded) flags.push_back(u.flag);
  EXPECT_EQ(flags, (std::vector<std::string>{"--inner-sampler", "--seed", "--batch-size"}));

  // The run's own settings, its records the only inputs: the 6 samples it evaluated are all
  // the simulation evaluates, and it is diagnosed from them as the run was.
  Scenario same = s;
  same.dataset.clear();
  same.predictor.clear();
  const RecordedRunInputs inputs = recorded_run_inputs(runs[0], same, false, "partial.slrun");
  EXPECT_TRUE(inputs.partial);
  EXPECT_FALSE(inputs.labels_known);
  const Evaluation again = simulate_recorded_run(same, runs[0], inputs);
  const Comparison c = compare_evaluations(runs[0], again);
  EXPECT_TRUE(c.equal && c.ranks_equal()) << c.cells_differing;
  EXPECT_EQ(again.meta.class_counts, runs[0].meta.class_counts);
  EXPECT_FALSE(again.expected.has_value());
  EXPECT_EQ(again.diagnosis.correct, runs[0].diagnosis.correct);

  // Every batch evaluates samples whose predictions and labels the run does not know.
  same.loader.limit = BatchLimit::parse("1.0");
  const std::string what = error_of([&] { simulate_recorded_run(same, runs[0], inputs); });
  EXPECT_NE(what.find("partial.slrun (epoch 0): the simulation evaluates 14 sample(s) the run "
                      "never evaluated"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("predictions and labels"), std::string::npos) << what;
  EXPECT_NE(what.find("--predictor"), std::string::npos) << what;
  EXPECT_NE(what.find("--dataset"), std::string::npos) << what;
}

// The recorder's `sync` chooses the simulation's; a batch size read off the first batch is
// said as such and may differ between ranks; a run that reported no matrix assumes nothing.
TEST_F(ImportSettingsTest, RecordedSyncAndBatchSizeSource) {
  const Scenario s = small_scenario();
  const RunFile sim = run_from_evaluation(simulate(s));
  auto like_of = [&](const std::string& name, const json& extra, bool reported) {
    std::vector<std::string> paths;
    for (int r = 0; r < 3; ++r) {
      json j = lightning_settings(s, r);
      j["framework"] = "torch";
      for (const auto& [key, value] : extra.items()) j[key] = value;
      Members extra_members = {{"settings_json.npy", settings(j)}};
      if (reported)
        extra_members.push_back(
            {"reported.npy", npy_bytes(sim.synced.cells, {int64_t(4), int64_t(4)})});
      paths.push_back(
          dump(name + "_rank" + std::to_string(r) + ".npz", rank_dump(sim, r, extra_members)));
    }
    save_run_epochs(import_epochs(paths, {}).epochs, path(name + ".slrun"));
    return recorded_run_scenario(load_run_evaluations(path(name + ".slrun")), 0, name);
  };
  auto notes = [](const RecordedRunScenario& like) {
    std::vector<std::string> flags;
    for (const AssumedSetting& a : like.assumptions) flags.push_back(a.flag);
    return flags;
  };
  RecordedRunScenario like = like_of("gathered", {{"sync", "gather-for-metrics"}}, true);
  EXPECT_EQ(like.scenario.sync, SyncStrategy::GatherForMetrics);
  EXPECT_TRUE(notes(like).empty());
  like = like_of("unknown", {}, true);
  EXPECT_EQ(like.scenario.sync, SyncStrategy::AllReduce);
  EXPECT_EQ(notes(like), std::vector<std::string>{"--sync"});
  like = like_of("summed", {}, false);  // the run's synced matrix is the sum of its ranks
  EXPECT_TRUE(notes(like).empty());
  like = like_of("bogus", {{"sync", "average"}}, true);
  ASSERT_EQ(like.unrecorded.size(), 1u);
  EXPECT_EQ(like.unrecorded[0].flag, "--sync");
  EXPECT_NE(like.unrecorded[0].what.find("'average'"), std::string::npos);
  like = like_of("first", {{"batch_size_source", "first-batch"}, {"loader_drop_last", nullptr}},
                 false);
  EXPECT_EQ(like.scenario.loader.batch_size, 2);
  EXPECT_EQ(notes(like), (std::vector<std::string>{"--batch-size", "--loader-drop-last"}));

  const std::string a = R"({"rank": 0, "batch_size": 8, "batch_size_source": "first-batch",
                            "sync": "all-reduce"})";
  const std::string b = R"({"rank": 1, "batch_size": 5, "batch_size_source": "first-batch",
                            "sync": "all-reduce"})";
  const RecordedSettings ra = parse_recorded_settings(a, "a.npz");
  EXPECT_EQ(ra.sync, "all-reduce");
  EXPECT_EQ(ra.batch_size_source, "first-batch");
  EXPECT_TRUE(same_evaluation_settings(ra, parse_recorded_settings(b, "b.npz")));
  std::string key;
  std::string given = b;
  given.replace(given.find("first-batch"), 11, "given");
  EXPECT_FALSE(same_evaluation_settings(ra, parse_recorded_settings(given, "b.npz"), &key));
  EXPECT_EQ(recorded_settings_text(ra), "batch_size 8 (its first batch), sync all-reduce");
  EXPECT_NE(error_of([] { parse_recorded_settings(R"({"sync": 1})", "c.npz"); }).find("'sync'"),
            std::string::npos);
}

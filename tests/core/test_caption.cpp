// The one source of titles and captions (core/evaluation/caption.h): a scenario file's title
// only while its settings are unchanged, what changed named otherwise, and the epoch named
// whenever the order depends on it and in every text report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/evaluation/caption.h"
#include "core/evaluation/scenario_settings.h"
#include "core/report/report.h"
#include "core/sim/engine.h"
#include "tests/core/test_io_util.h"

using namespace shardlens;
using shardlens::io_test::TempDir;
using shardlens::io_test::write_bytes;

namespace {

// A lesson-like scenario file: 510 samples (10 classes x 51) on 4 ranks, unshuffled, whose
// title states those numbers.
constexpr const char* kLessonTitle = "Padding: 510 samples on 4 ranks";

Scenario load_lesson_like(const TempDir& dir) {
  const std::string path = dir.path("padding.json");
  write_bytes(path, nlohmann::json{{"name", "padding"},
                                   {"title", kLessonTitle},
                                   {"description", "510 is not a multiple of 4."},
                                   {"dataset", "synthetic:classes=10,per-class=51"},
                                   {"world_size", 4},
                                   {"batch_size", 16},
                                   {"shuffle", false}}
                        .dump());
  return load_scenario_file(path);
}

void set(Scenario& s, const std::string& key, const std::string& text) {
  set_setting_text(scenario_setting(key), s, text);
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

TEST(Caption, AnUnchangedLessonKeepsItsTitle) {
  TempDir dir;
  const Evaluation e = simulate(load_lesson_like(dir));
  EXPECT_TRUE(changed_settings(e.scenario()).empty());
  EXPECT_EQ(evaluation_title(e), kLessonTitle);
  EXPECT_EQ(figure_caption(e, "synced"), std::string(kLessonTitle) + " — synced");
}

TEST(Caption, SteppingTheEpochIsNoChangeButIsNamed) {
  TempDir dir;
  Scenario s = load_lesson_like(dir);
  s.sampler.epoch = 2;
  const Evaluation e = simulate(s);
  EXPECT_EQ(scenario_title(e.scenario()), kLessonTitle);
  EXPECT_EQ(evaluation_title(e), std::string(kLessonTitle) + " — epoch 2");
}

TEST(Caption, ALessonOnAnotherWorldSizeNamesTheRanksItHas) {
  TempDir dir;
  Scenario s = load_lesson_like(dir);
  s.sampler.world_size = 64;
  const Evaluation e = simulate(s);
  ASSERT_EQ(e.meta.world_size, 64);
  const std::string title = evaluation_title(e);
  EXPECT_EQ(title, "padding (modified: World size 64)");
  EXPECT_EQ(title.find("4 ranks"), std::string::npos) << title;
  // The report, its JSON and the figures say the same.
  EXPECT_EQ(first_line(report_text(e)), title + " — epoch 0");
  EXPECT_EQ(report_json(e).at("title"), title + " — epoch 0");
  EXPECT_EQ(figure_caption(e, "per-rank matrices"), title + " — per-rank matrices");
  const auto changes = changed_settings(e.scenario());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes_text(changes), "World size 4 → 64");
}

TEST(Caption, EpochZeroOfAShuffledLimitedEvaluationIsNamed) {
  TempDir dir;
  Scenario s = load_lesson_like(dir);
  s.sampler.shuffle = true;
  set(s, "limit_batches", "2");
  const Evaluation e = simulate(s);
  EXPECT_EQ(evaluation_which(e), "epoch 0");
  EXPECT_EQ(figure_caption(e, "synced"),
            "padding (modified: Shuffle on, Limit batches 2) — "
            "synced — epoch 0");
  EXPECT_EQ(changes_text(changed_settings(e.scenario())),
            "Shuffle off → on, Limit batches all → 2");
}

TEST(Caption, AnUnshuffledFirstEpochIsNamedOnlyInTheTextReport) {
  TempDir dir;
  const Evaluation e = simulate(load_lesson_like(dir));
  EXPECT_EQ(evaluation_which(e), "");
  EXPECT_EQ(report_caption(e), std::string(kLessonTitle) + " — epoch 0");
  EXPECT_EQ(first_line(report_text(e)), std::string(kLessonTitle) + " — epoch 0");
}

TEST(Caption, AnEditedScenarioFileShowsAsModified) {
  TempDir dir;
  const std::string path = dir.path("mine.json");
  write_bytes(path, R"({"name": "mine", "title": "Mine: 8 ranks", "world_size": 8})");
  Scenario s = load_scenario_file(path);
  EXPECT_EQ(scenario_title(s), "Mine: 8 ranks");
  s.sampler.world_size = 64;
  EXPECT_TRUE(title_is_stale(s));
  EXPECT_EQ(scenario_title(s), "mine (modified: World size 64)");
  // Set back, it is the file's scenario again.
  s.sampler.world_size = 8;
  EXPECT_EQ(scenario_title(s), "Mine: 8 ranks");
}

TEST(Caption, AnotherDatasetIsNamedWhole) {
  TempDir dir;
  Scenario s = load_lesson_like(dir);
  set(s, "dataset", "synthetic:classes=1000,per-class=50");
  EXPECT_EQ(scenario_title(s), "padding (modified: Dataset synthetic:classes=1000,per-class=50)");
  set(s, "dataset", "synthetic:classes=1000,per-class=50,layout=blocks");
  EXPECT_EQ(scenario_title(s),
            "padding (modified: Dataset synthetic:classes=1000,per-class=50,layout=blocks)");
}

TEST(Caption, ManyChangesNameThreeAndCountTheRest) {
  TempDir dir;
  Scenario s = load_lesson_like(dir);
  s.sampler.world_size = 3;
  s.loader.batch_size = 7;
  s.sampler.seed = 5;
  s.sampler.shuffle = true;
  EXPECT_EQ(changed_settings(s).size(), 4u);
  const std::string title = scenario_title(s);
  EXPECT_EQ(title.rfind("padding (modified: ", 0), 0u) << title;
  EXPECT_NE(title.find(" and 1 more)"), std::string::npos) << title;
}

TEST(Caption, AScenarioMadeInCodeKeepsItsOwnTitle) {
  Scenario s;
  s.title = "Simulation like run.slrun (epoch 1)";
  s.sampler.world_size = 64;
  EXPECT_EQ(scenario_title(s), s.title);
  s.title.clear();
  s.name.clear();
  EXPECT_EQ(scenario_title(s), "ShardLens evaluation");
}

TEST(Caption, OnlyAShufflingSamplerMakesTheOrderDependOnTheEpoch) {
  SamplerConfig c;
  EXPECT_FALSE(order_depends_on_epoch(c));
  c.shuffle = true;
  EXPECT_TRUE(order_depends_on_epoch(c));
  c.kind = SamplerKind::Detectron2Inference;  // never shuffles
  EXPECT_FALSE(order_depends_on_epoch(c));
  c = {};
  c.kind = SamplerKind::LightningWrapper;
  c.inner.kind = InnerSampler::Kind::WeightedRandom;  // draws its list again each pass
  EXPECT_TRUE(order_depends_on_epoch(c));
}

TEST(Caption, AnEditedLessonIsSavedUnderWhatItIsNow) {
  TempDir dir;
  Scenario s = load_lesson_like(dir);
  s.sampler.world_size = 64;
  const std::string path = dir.path("saved.json");
  save_scenario_file(s, path);
  const Scenario back = load_scenario_file(path);
  EXPECT_EQ(back.title, "padding (modified: World size 64)");
  EXPECT_EQ(back.description, "");  // it described 4 ranks
  EXPECT_EQ(scenario_title(back), back.title);
  // Unchanged, the lesson's own title and text are saved.
  save_scenario_file(load_lesson_like(dir), path);
  EXPECT_EQ(load_scenario_file(path).title, kLessonTitle);
  EXPECT_EQ(load_scenario_file(path).description, "510 is not a multiple of 4.");
}

// Dataset / predictor spec strings and scenario files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/predictor.h"
#include "core/scenario.h"
#include "core/specs.h"
#include "core/types.h"

using namespace shardlens;

TEST(Specs, ParsesOptionsAndCommaLists) {
  const Spec s = parse_spec("synthetic:counts=3,5,7,layout=blocks", "--dataset");
  EXPECT_EQ(s.kind, "synthetic");
  EXPECT_EQ(s.options.at("counts"), "3,5,7");
  EXPECT_EQ(s.options.at("layout"), "blocks");
  const Spec f = parse_spec("npy:/tmp/a,b.npy,classes=4", "--dataset");
  EXPECT_EQ(f.path, "/tmp/a,b.npy");
  EXPECT_EQ(f.options.at("classes"), "4");
  EXPECT_THROW(parse_spec("synthetic:classes=2,classes=3", "--dataset"), InputError);
  EXPECT_THROW(parse_spec("synthetic:oops", "--dataset"), InputError);
}

TEST(Specs, SyntheticLabels) {
  const Labels a = load_labels("synthetic:counts=3,5,7");
  EXPECT_EQ(a.class_counts(), (std::vector<int64_t>{3, 5, 7}));
  const Labels b = load_labels("synthetic:classes=4,per-class=6,layout=blocks");
  EXPECT_EQ(b.targets[0], 0);
  EXPECT_EQ(b.targets[23], 3);
  const Labels z = load_labels("synthetic:classes=5,n=1000,zipf=1.0");
  const auto counts = z.class_counts();
  EXPECT_EQ(counts[0] + counts[1] + counts[2] + counts[3] + counts[4], 1000);
  EXPECT_GT(counts[0], counts[1]);
  EXPECT_GT(counts[1], counts[4]);
  // 1/k shares of 1000 over 5 classes: 438, 219, 146, 109, 88 (largest remainders).
  EXPECT_EQ(counts, (std::vector<int64_t>{438, 219, 146, 109, 88}));
}

TEST(Specs, SyntheticRejectsNonsense) {
  for (const char* bad :
       {"synthetic:classes=0,per-class=5", "synthetic:classes=3",
        "synthetic:classes=3,per-class=-1", "synthetic:counts=1,x",
        "synthetic:classes=70000,per-class=1", "synthetic:classes=2,n=5,zipf=1,color=red",
        "fashion-mnist:validation", "npy:"}) {
    EXPECT_THROW(load_labels(bad), InputError) << bad;
  }
}

TEST(Specs, NoisyPredictorIsDeterministicPerIndex) {
  const Labels l = load_labels("synthetic:classes=10,per-class=1000");
  const auto a = load_predictions("noisy:accuracy=0.7,seed=5", l);
  const auto b = load_predictions("noisy:accuracy=0.7,seed=5", l);
  EXPECT_EQ(a, b);
  int64_t right = 0;
  for (size_t i = 0; i < a.size(); ++i) right += a[i] == l.targets[i];
  EXPECT_NEAR(static_cast<double>(right) / 10000.0, 0.7, 0.02);
  EXPECT_NE(a, load_predictions("noisy:accuracy=0.7,seed=6", l));
  const auto adj = load_predictions("noisy:accuracy=0.5,seed=1,structure=adjacent", l);
  for (size_t i = 0; i < adj.size(); ++i) {
    const int d = (adj[i] - l.targets[i] + 10) % 10;
    EXPECT_TRUE(d == 0 || d == 1 || d == 9);
  }
  EXPECT_EQ(load_predictions("perfect", l), l.targets);
  EXPECT_THROW(load_predictions("noisy:accuracy=0.5,structure=diagonal", l), InputError);
  EXPECT_THROW(load_predictions("oracle", l), InputError);
}

TEST(Scenario, JsonRoundTrip) {
  Scenario s;
  s.name = "x";
  s.sampler.world_size = 3;
  s.sampler.shuffle = true;
  s.sampler.rank_seeds = {1, 2, 3};
  s.loader.limit = BatchLimit::parse("0.25");
  s.sync = SyncStrategy::GatherForMetrics;
  s.dtype = CounterDtype::BFloat16;
  s.sampler.torch = TorchVersion::parse("2.7");
  const Scenario back = scenario_from_json(to_json(s), "test");
  EXPECT_EQ(to_json(back), to_json(s));
}

TEST(Scenario, RejectsUnknownKeysAndWrongTypes) {
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"world_sise", 4}}, "f.json"), InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"world_size", "four"}}, "f.json"), InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json::array(), "f.json"), InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"sync", "twice"}}, "f.json"), InputError);
  EXPECT_EQ(scenario_from_json(nlohmann::json{{"limit_batches", 10}}, "f").loader.limit.apply(20),
            10);
}

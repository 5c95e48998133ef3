// Lightning's DistributedSamplerWrapper and torch.multinomial against vectors made with real
// torch objects (scripts/oracles/make_lightning_wrapper_vectors.py: WeightedRandomSampler with a
// generator, a real DistributedSampler over the materialised list), and the diagnoses of
// the wrapper and of several validations per epoch.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/sim/validations.h"
#include "core/torchsem/lightning_wrapper.h"
#include "core/torchsem/loader.h"
#include "core/vocabulary/types.h"
#include "tests/common/test_rows.h"

using namespace shardlens;

namespace {

// Read once, when the rows are made (before main); unreadable or not JSON gives no cases,
// which ReferenceVectorsAreThere reports.
const nlohmann::json& reference_vectors() {
  static const nlohmann::json vectors = [] {
    std::ifstream in(SHARDLENS_TEST_DATA_DIR "/reference/lightning_wrapper_vectors.json");
    nlohmann::json parsed = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? nlohmann::json{{"multinomial", nlohmann::json::array()},
                                                  {"cases", nlohmann::json::array()}}
                                 : parsed;
  }();
  return vectors;
}

// One row per case of a vector file, named by its settings.
struct VectorRow {
  std::string name;
  nlohmann::json vector;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const VectorRow& row, std::ostream* os) {
  *os << row.name;
}

std::vector<VectorRow> multinomial_rows() {
  std::vector<VectorRow> rows;
  for (const auto& v : reference_vectors()["multinomial"])
    rows.push_back({"weights" + std::to_string(v["weights"].size()) + "_draws" +
                        v["num_samples"].dump() + "_seed" + v["seed"].dump(),
                    v});
  return shardlens::test::with_unique_names(std::move(rows));
}

std::vector<VectorRow> wrapper_rows() {
  std::vector<VectorRow> rows;
  for (const auto& v : reference_vectors()["cases"]) {
    const auto& inner = v["inner"];
    std::string name =
        inner["kind"].get<std::string>() + "_n" + v["n"].dump() + "_world" + v["world_size"].dump();
    if (inner["kind"] != "sequential") name += "_draws" + inner["num_samples"].dump();
    if (v["shuffle"].get<bool>()) name += "_shuffle_seed" + v["seed"].dump();
    name += "_epoch" + v["epoch"].dump();
    if (v["iteration"].get<int64_t>() != 0) name += "_iteration" + v["iteration"].dump();
    if (v["drop_last"].get<bool>()) name += "_droplast";
    if (!v["rank_seeds"].empty()) name += "_rankseeds";
    rows.push_back({name, v});
  }
  return shardlens::test::with_unique_names(std::move(rows));
}

bool has_pattern(const Evaluation& e, Pattern p) {
  for (const Finding& f : e.diagnosis.findings)
    if (f.pattern == p) return true;
  return false;
}

}  // namespace

TEST(LightningWrapper, ReferenceVectorsAreThere) {
  EXPECT_GE(reference_vectors()["multinomial"].size(), 4u);
  EXPECT_GE(reference_vectors()["cases"].size(), 50u);
}

class Multinomial : public ::testing::TestWithParam<VectorRow> {};

TEST_P(Multinomial, MatchesTorch) {
  const nlohmann::json& v = GetParam().vector;
  const auto weights = v["weights"].get<std::vector<double>>();
  const auto draws = weighted_random_draws(
      weights, int64_t(weights.size()), v["num_samples"].get<int64_t>(), v["seed"].get<int64_t>());
  EXPECT_EQ(std::vector<int64_t>(draws.begin(), draws.end()),
            v["draws"].get<std::vector<int64_t>>());
}

INSTANTIATE_TEST_SUITE_P(Vectors, Multinomial, ::testing::ValuesIn(multinomial_rows()),
                         shardlens::test::NamedRow());

class LightningWrapperReference : public ::testing::TestWithParam<VectorRow> {};

TEST_P(LightningWrapperReference, ShardsEqualTorchs) {
  const nlohmann::json& v = GetParam().vector;
  SamplerConfig c;
  c.kind = SamplerKind::LightningWrapper;
  c.world_size = v["world_size"].get<int>();
  c.shuffle = v["shuffle"].get<bool>();
  c.seed = v["seed"].get<int64_t>();
  c.epoch = v["epoch"].get<int64_t>();
  c.drop_last = v["drop_last"].get<bool>();
  c.rank_seeds = v["rank_seeds"].get<std::vector<int64_t>>();
  c.inner_iteration = v["iteration"].get<int64_t>();
  const auto& inner = v["inner"];
  c.inner.kind = parse_inner_sampler_kind(inner["kind"].get<std::string>());
  c.inner.weights = inner["weights"].get<std::vector<double>>();
  c.inner.num_samples = inner["num_samples"].get<int64_t>();
  c.inner.indices = inner["indices"].get<std::vector<int64_t>>();
  const auto ranks = sample(v["n"].get<int64_t>(), c);
  ASSERT_EQ(ranks.size(), v["ranks"].size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    EXPECT_EQ(ranks[r].indices(), v["ranks"][r].get<std::vector<int64_t>>()) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Vectors, LightningWrapperReference, ::testing::ValuesIn(wrapper_rows()),
                         shardlens::test::NamedRow());

TEST(LightningWrapper, SequentialInnerEqualsDistributedSampler) {
  SamplerConfig wrapped;
  wrapped.kind = SamplerKind::LightningWrapper;
  wrapped.world_size = 4;
  wrapped.shuffle = true;
  SamplerConfig plain = wrapped;
  plain.kind = SamplerKind::Distributed;
  const auto a = sample(10, wrapped);
  const auto b = sample(10, plain);
  for (size_t r = 0; r < a.size(); ++r) {
    EXPECT_EQ(a[r].indices(), b[r].indices());
    EXPECT_EQ(a[r].flags(), b[r].flags());
  }
}

TEST(LightningWrapper, UnseededWeightedSamplerOverlaps) {
  Scenario s;
  s.dataset = "synthetic:classes=4,per-class=25";
  s.predictor = "perfect";
  s.sampler.kind = SamplerKind::LightningWrapper;
  s.sampler.world_size = 4;
  s.sampler.inner.kind = InnerSampler::Kind::WeightedRandom;
  s.sampler.rank_seeds = {11, 12, 13, 14};  // every rank's generator in its own state
  const Evaluation e = simulate(s);
  EXPECT_FALSE(e.diagnosis.correct);
  EXPECT_TRUE(has_pattern(e, Pattern::WrapperOverlap));
  EXPECT_FALSE(has_pattern(e, Pattern::RankOverlap));
  // Seeded alike, the ranks share one list: its repeats are the draws with replacement, not
  // ranks drawing their own lists.
  s.sampler.rank_seeds.clear();
  const ShardPlan plan = plan_shards(100, s.sampler, s.loader);
  EXPECT_EQ(plan.sampler[0].segments.front().order, plan.sampler[1].segments.front().order);
  const Evaluation shared = simulate(s);
  EXPECT_FALSE(has_pattern(shared, Pattern::WrapperOverlap));
  EXPECT_FALSE(has_pattern(shared, Pattern::RankOverlap));
  EXPECT_FALSE(has_pattern(shared, Pattern::SanityLeak));
  EXPECT_TRUE(has_pattern(shared, Pattern::SamplerWithReplacement));
}

TEST(Validations, EveryValidationOfTheEpochSeesTheSameSubset) {
  Scenario s;
  s.dataset = "synthetic:classes=5,per-class=40";
  s.predictor = "noisy:accuracy=0.9,seed=2";
  s.sampler.world_size = 4;
  s.sampler.shuffle = true;
  s.sampler.epoch = 2;
  s.loader.batch_size = 5;
  s.loader.limit = BatchLimit::parse("3");
  s.validations_per_epoch = 3;
  const std::vector<Evaluation> v = simulate_validations(s);
  ASSERT_EQ(v.size(), 3u);
  for (size_t k = 0; k < v.size(); ++k) {
    EXPECT_EQ(v[k].validation(), int(k));
    EXPECT_EQ(v[k].times_evaluated, v[0].times_evaluated);
    EXPECT_TRUE(has_pattern(v[k], Pattern::RepeatedValidationSubset));
  }
  // Without a limit every validation sees everything: nothing to flag.
  s.loader.limit = BatchLimit{};
  for (const Evaluation& e : simulate_validations(s))
    EXPECT_FALSE(has_pattern(e, Pattern::RepeatedValidationSubset));
}

TEST(Validations, AWrappedRandomSamplerDrawsAnewEachValidation) {
  Scenario s;
  s.dataset = "synthetic:classes=5,per-class=40";
  s.predictor = "perfect";
  s.sampler.kind = SamplerKind::LightningWrapper;
  s.sampler.inner.kind = InnerSampler::Kind::WeightedRandom;
  s.sampler.world_size = 2;
  s.validations_per_epoch = 2;
  const std::vector<Evaluation> v = simulate_validations(s);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NE(v[0].times_evaluated, v[1].times_evaluated);
}

// The wrapper lesson's fix: one generator seeded alike on every rank gives one shared list.
TEST(LightningWrapper, LessonAndItsFix) {
  Scenario s = load_preset("wrapper-overlap");
  EXPECT_TRUE(has_pattern(simulate(s), Pattern::WrapperOverlap));
  s.sampler.rank_seeds.clear();
  const Evaluation fixed = simulate(s);
  EXPECT_FALSE(has_pattern(fixed, Pattern::WrapperOverlap));
  // What remains is the weighted sampler's own draw, which the lesson's fix keeps.
  EXPECT_TRUE(has_pattern(fixed, Pattern::SamplerWithReplacement));
  s = load_preset("repeated-validation-subset");
  const auto v = simulate_validations(s);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].diagnosis.distinct_evaluated, 120);
  s.loader.limit = BatchLimit{};  // the whole set in every validation
  for (const Evaluation& e : simulate_validations(s))
    EXPECT_FALSE(has_pattern(e, Pattern::RepeatedValidationSubset));
}

// Dataset / predictor spec strings and scenario files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "core/dataset/dataset_spec.h"
#include "core/evaluation/scenario.h"
#include "core/io/npy.h"
#include "core/realrun/model_predictions.h"
#include "core/sim/predictor.h"
#include "core/sim/specs.h"
#include "core/vocabulary/types.h"
#include "test_io_util.h"
#include "tests/common/test_rows.h"

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

namespace {

// Dataset specs that name no dataset, one row each, named by what is wrong.
struct BadSpecRow {
  std::string name;
  std::string spec;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const BadSpecRow& row, std::ostream* os) {
  *os << row.name;
}

class BadDatasetSpec : public ::testing::TestWithParam<BadSpecRow> {};
class BadModelPredictorSpec : public ::testing::TestWithParam<BadSpecRow> {};

}  // namespace

TEST_P(BadDatasetSpec, IsAnInputError) {
  EXPECT_THROW(load_labels(GetParam().spec), InputError);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, BadDatasetSpec,
    ::testing::Values(
        BadSpecRow{"SyntheticNoClasses", "synthetic:classes=0,per-class=5"},
        BadSpecRow{"SyntheticClassesWithoutSizes", "synthetic:classes=3"},
        BadSpecRow{"SyntheticNegativePerClass", "synthetic:classes=3,per-class=-1"},
        BadSpecRow{"SyntheticCountNotANumber", "synthetic:counts=1,x"},
        BadSpecRow{"SyntheticTooManyClasses", "synthetic:classes=70000,per-class=1"},
        BadSpecRow{"SyntheticUnknownOption", "synthetic:classes=2,n=5,zipf=1,color=red"},
        BadSpecRow{"FashionMnistUnknownSplit", "fashion-mnist:validation"},
        BadSpecRow{"NpyWithoutPath", "npy:"},
        BadSpecRow{"SyntheticNWithoutZipf", "synthetic:classes=3,n=30"},
        // A NUL would cut what the OS reads: refused, not silently shortened.
        BadSpecRow{"NulInsideSpec", std::string("synthetic:classes=3,per-class=5\0,first=2", 40)}),
    shardlens::test::NamedRow());

// A path with a NUL would open the file named up to it; the spec is refused instead.
TEST(Specs, NulInsideAPathIsRefused) {
  const std::string spec("npy:labels.npy\0.evil", 20);
  try {
    parse_spec(spec, "--dataset");
    FAIL() << "a spec with a NUL was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NUL character at byte 14"), std::string::npos)
        << e.what();
  }
}

// The blocked, prefetching layout shuffle against the loop it replaced, around its blocks.
class ShuffleLayoutOfSize : public ::testing::TestWithParam<int64_t> {};

TEST_P(ShuffleLayoutOfSize, EqualsTextbookLoop) {
  const int64_t n = GetParam();
  std::vector<int32_t> want(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) want[size_t(i)] = int32_t(i % 13);
  std::vector<int32_t> got = want;
  std::mt19937 gen(5);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(gen() % static_cast<uint64_t>(i + 1));
    std::swap(want[size_t(i)], want[size_t(j)]);
  }
  shuffle_layout(got, 5);
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ShuffleLayoutOfSize, ::testing::Values(1, 2, 256, 257, 70001),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

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

TEST(Scenario, JsonRoundTripOfAccelerateAndLightningSettings) {
  Scenario s;
  s.sampler.kind = SamplerKind::Accelerate;
  s.sampler.split_batches = true;
  s.sampler.even_batches = false;
  s.sampler.accelerate_input = AccelerateInput::DistributedSampler;
  s.sampler.accelerate_shuffle = AccelerateShuffle::Seedable;
  s.sync = SyncStrategy::Gather;
  s.validations_per_epoch = 3;
  Scenario back = scenario_from_json(to_json(s), "test");
  EXPECT_EQ(back.sampler.kind, SamplerKind::Accelerate);
  EXPECT_EQ(back.sampler.accelerate_input, AccelerateInput::DistributedSampler);
  EXPECT_EQ(back.sampler.accelerate_shuffle, AccelerateShuffle::Seedable);
  EXPECT_TRUE(back.sampler.split_batches);
  EXPECT_FALSE(back.sampler.even_batches);
  EXPECT_EQ(back.sync, SyncStrategy::Gather);
  EXPECT_EQ(back.validations_per_epoch, 3);
  EXPECT_EQ(to_json(back), to_json(s));
  s.sampler.kind = SamplerKind::LightningWrapper;
  s.sampler.inner.kind = InnerSampler::Kind::WeightedRandom;
  s.sampler.inner.weights = {0.5, 2.0, 1.0};
  s.sampler.inner.num_samples = 7;
  back = scenario_from_json(to_json(s), "test");
  EXPECT_EQ(back.sampler.inner, s.sampler.inner);
  s.sampler.inner = {};
  s.sampler.inner.kind = InnerSampler::Kind::Recorded;
  s.sampler.inner.indices = {3, 1, 4, 1, 5};
  back = scenario_from_json(to_json(s), "test");
  EXPECT_EQ(back.sampler.inner, s.sampler.inner);
  // An older scenario without the keys keeps the defaults.
  back = scenario_from_json(nlohmann::json{{"sampler", "accelerate"}}, "old.json");
  EXPECT_TRUE(back.sampler.even_batches);
  EXPECT_EQ(back.sampler.accelerate_input, AccelerateInput::Loader);
  EXPECT_EQ(back.sampler.accelerate_shuffle, AccelerateShuffle::GlobalRng);
  EXPECT_EQ(back.validations_per_epoch, 1);
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"accelerate_input", "twice"}}, "f"), InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"accelerate_shuffle", "magic"}}, "f"),
               InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"inner_sampler", {{"kind", "magic"}}}}, "f"),
               InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"inner_sampler", {{"wieghts", {1}}}}}, "f"),
               InputError);
}

TEST(Scenario, RejectsUnknownKeysAndWrongTypes) {
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"world_sise", 4}}, "f.json"), InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"world_size", "four"}}, "f.json"), InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json::array(), "f.json"), InputError);
  EXPECT_THROW(scenario_from_json(nlohmann::json{{"sync", "twice"}}, "f.json"), InputError);
  EXPECT_EQ(scenario_from_json(nlohmann::json{{"limit_batches", 10}}, "f").loader.limit.apply(20),
            10);
}

// Found by fuzz/fuzz_scenario: a number too large for a double made nlohmann throw
// out_of_range, which escaped load_scenario_file as a non-InputError.
TEST(Scenario, FileWithAnOverflowingNumberIsInvalidJson) {
  io_test::TempDir dir;
  const std::string path = dir.path("huge.json");
  io_test::write_bytes(path, "8e843");
  EXPECT_INPUT_ERROR(load_scenario_file(path), path, "not valid JSON");
  io_test::write_bytes(path, R"({"seed": 1e400})");
  EXPECT_INPUT_ERROR(load_scenario_file(path), path, "not valid JSON");
}

// A malformed scenario says where and what in plain words, not the JSON library's codes.
TEST(Scenario, MalformedFileSaysWhereInPlainWords) {
  io_test::TempDir dir;
  const std::string path = dir.path("bad.json");
  io_test::write_bytes(path, "{\"world_size\": 4,, }");
  try {
    load_scenario_file(path);
    FAIL();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ": not valid JSON at line 1, column 18", 0), 0u) << what;
    EXPECT_EQ(what.find("json.exception"), std::string::npos) << what;
    EXPECT_EQ(what.find("parse_error"), std::string::npos) << what;
  }
}

// Integer settings given as floats or beyond their type were converted silently (or with
// undefined behaviour, for 1e300 into an int).
TEST(Scenario, RejectsIntegersThatAreFractionalOrOutOfRange) {
  using nlohmann::json;
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"world_size", 1e300}}, "f.json"), "f.json",
                     "'world_size' must be an integer (is 1e+300)");
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"world_size", 2.5}}, "f.json"), "f.json",
                     "'world_size' must be an integer (is 2.5)");
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"world_size", 4294967297LL}}, "f.json"), "f.json",
                     "'world_size' must be an integer in [1, 4096] (is 4294967297)");
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"seed", 18446744073709551615ULL}}, "f.json"),
                     "f.json",
                     "'seed' must be an integer in [-9223372036854775808, 9223372036854775807] "
                     "(is 18446744073709551615)");
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"rank_seeds", {1, 0.5}}}, "f.json"), "f.json",
                     "'rank_seeds' must be a list of integers (holds 0.5)");
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"ignore_index", -2147483649LL}}, "f.json"), "f.json",
                     "'ignore_index' must be an integer in [-1, 32767]");
  EXPECT_EQ(scenario_from_json(json{{"seed", -5}, {"ignore_index", 255}}, "f").sampler.seed, -5);
}

// The value parsers name their command-line flag; from a file, the file comes first and the
// setting is named by its key.
TEST(Scenario, ValueErrorsNameTheFile) {
  using nlohmann::json;
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"sync", "twice"}}, "run.slrun: meta.json scenario"),
                     "run.slrun: meta.json scenario: sync: ", "twice");
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"torch_version", "x"}}, "f.json"), "f.json",
                     "not a version");
  EXPECT_INPUT_ERROR(scenario_from_json(json{{"limit_batches", -1}}, "f.json"),
                     "f.json: limit_batches: ", "'-1'");
  io_test::TempDir dir;
  const std::string path = dir.path("bad.json");
  io_test::write_bytes(path, R"({"sampler": "random"})");
  const std::string msg = io_test::input_error_of([&] { load_scenario_file(path); });
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
  EXPECT_EQ(msg.find(path, 1), std::string::npos) << "file named twice: " << msg;
}

// Error messages quoted the bad value with json::dump(), which recurses per nesting level: a
// list nested a million deep (a 2 MB file) overflowed the stack instead of being rejected.
// Such nesting is now refused before it is parsed (kMaxJsonDepth); a shallow list in the same
// place is still named by the key's check without recursing.
TEST(Scenario, DeeplyNestedValueIsRejectedWithoutRecursion) {
  io_test::TempDir dir;
  const std::string path = dir.path("deep.json");
  const size_t depth = 1000000;
  io_test::write_bytes(path,
                       "{\"name\": " + std::string(depth, '[') + std::string(depth, ']') + "}");
  EXPECT_INPUT_ERROR(load_scenario_file(path), path, "nests lists or objects deeper than 256");
  const size_t shallow = 200;
  io_test::write_bytes(path,
                       "{\"name\": " + std::string(shallow, '[') + std::string(shallow, ']') + "}");
  EXPECT_INPUT_ERROR(load_scenario_file(path), path, "'name' must be a string (is a list)");
  io_test::write_bytes(
      path, "{\"limit_batches\": " + std::string(shallow, '[') + std::string(shallow, ']') + "}");
  EXPECT_INPUT_ERROR(load_scenario_file(path), path,
                     "'limit_batches' must be a string (is a list)");
  io_test::write_bytes(path, "{\"title\": \"" + std::string(100, 'x') + "\", \"seed\": \"" +
                                 std::string(100, 'y') + "\"}");
  EXPECT_INPUT_ERROR(load_scenario_file(path), path, "a string of 100 bytes");
}

// Subsets of any dataset kind keep the full dataset's index of each sample.
TEST(Specs, DatasetSubsets) {
  const Labels full = load_labels("synthetic:classes=3,per-class=4");
  const Labels first = load_labels("synthetic:classes=3,per-class=4,first=5");
  ASSERT_EQ(first.size(), 5);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(first.targets[i], full.targets[i]);
  EXPECT_EQ(first.source_indices, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(first.num_classes, 3);

  const auto dir =
      std::filesystem::temp_directory_path() / ("shardlens_subset_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string idx = (dir / "pick.npy").string();
  std::ofstream(idx, std::ios::binary) << npy_bytes(std::vector<int64_t>{11, 0, 7}, {3});
  const Labels picked = load_labels("synthetic:classes=3,per-class=4,indices=" + idx);
  EXPECT_EQ(picked.targets,
            (std::vector<int32_t>{full.targets[11], full.targets[0], full.targets[7]}));
  EXPECT_EQ(picked.source_indices, (std::vector<int64_t>{11, 0, 7}));

  // names= works on synthetic datasets too.
  const std::string names = (dir / "names.txt").string();
  std::ofstream(names) << "cat\ndog\nemu\n";
  EXPECT_EQ(load_labels("synthetic:classes=3,per-class=4,names=" + names).class_names,
            (std::vector<std::string>{"cat", "dog", "emu"}));

  std::ofstream(idx, std::ios::binary | std::ios::trunc)
      << npy_bytes(std::vector<int64_t>{1, 12}, {2});
  EXPECT_THROW(load_labels("synthetic:classes=3,per-class=4,indices=" + idx), InputError);
  std::ofstream(idx, std::ios::binary | std::ios::trunc)
      << npy_bytes(std::vector<int64_t>{1, 1}, {2});
  EXPECT_THROW(load_labels("synthetic:classes=3,per-class=4,indices=" + idx), InputError);
  EXPECT_THROW(load_labels("synthetic:classes=3,per-class=4,first=13"), InputError);
  EXPECT_THROW(load_labels("synthetic:classes=3,per-class=4,first=2,indices=" + idx), InputError);
  std::filesystem::remove_all(dir);
}

TEST(Specs, ModelPredictorSpecs) {
  const ModelPredictorSpec ref = parse_model_predictor("model:reference");
  EXPECT_EQ(ref.model_path, reference_model_path());
  EXPECT_EQ(ref.device, "cpu");
  EXPECT_NE(ref.model_path.find("models/fashion_mnist_reference.pt"), std::string::npos);
  // A path with commas runs up to the first ",key=".
  const ModelPredictorSpec gpu = parse_model_predictor("model:/tmp/a,b.pt,device=cuda:1");
  EXPECT_EQ(gpu.model_path, "/tmp/a,b.pt");
  EXPECT_EQ(gpu.device, "cuda:1");
}

TEST_P(BadModelPredictorSpec, IsAnInputError) {
  EXPECT_THROW(parse_model_predictor(GetParam().spec), InputError);
}

INSTANTIATE_TEST_SUITE_P(Specs, BadModelPredictorSpec,
                         ::testing::Values(BadSpecRow{"NoPath", "model:"},
                                           BadSpecRow{"UnknownDevice", "model:m.pt,device=gpu"},
                                           BadSpecRow{"UnknownOption", "model:m.pt,batch=3"}),
                         shardlens::test::NamedRow());

TEST(Specs, ModelPredictorGoesThroughTheInstalledFunction) {
  const Labels labels = load_labels("synthetic:classes=3,per-class=2");
  set_model_predictor({});
  try {
    load_predictions("model:m.pt", labels);
    FAIL() << "a model ran without a predictor installed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model:m.pt"), std::string::npos) << e.what();
  }
  // What the installed function returns is validated like a recorded predictor.
  std::string seen;
  set_model_predictor([&](const ModelPredictorSpec& m, const Labels& l, Progress*) {
    seen = m.model_path + "@" + m.device;
    return std::vector<int32_t>(size_t(l.size()), 2);
  });
  EXPECT_EQ(load_predictions("model:m.pt,device=cuda:0", labels), std::vector<int32_t>(6, 2));
  EXPECT_EQ(seen, "m.pt@cuda:0");
  set_model_predictor([](const ModelPredictorSpec&, const Labels&, Progress*) {
    return std::vector<int32_t>{0, 1, 3, 0, 0, 0};  // 3 is not a class
  });
  EXPECT_THROW(load_predictions("model:m.pt", labels), InputError);
  set_model_predictor({});
}

TEST(Specs, ModelPredictorRefusesDatasetsWithoutInputs) {
  install_model_predictor();
  for (const char* dataset : {"synthetic:classes=3,per-class=2"}) {
    const Labels labels = load_labels(dataset);
    try {
      load_predictions("model:reference", labels);
      FAIL() << dataset;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("no inputs"), std::string::npos) << e.what();
    }
  }
  set_model_predictor({});
}

// Sizes that files and flags declare, checked against the load budget before anything is
// allocated for them: every test writes a small hostile input, runs the reader or
// the command's core path under a small budget and expects a refusal that names the file or
// flag, the sizes and the budget. tests/integration/hostile_sizes.py runs the same inputs
// through shardlens-cli and bounds each child's peak resident size.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "../common/small_run.h"
#include "core/dataset/dataset_spec.h"
#include "core/io/json_fields.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/runfile/import.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

using io_test::TempDir;
using io_test::write_bytes;

struct BudgetGuard {
  explicit BudgetGuard(uint64_t bytes) { set_load_budget(bytes); }
  ~BudgetGuard() { set_load_budget(0); }
};

constexpr uint64_t kMiB = uint64_t(1) << 20;

TEST(EvaluationMemory, AddsMatricesPerIndexArraysAndRecords) {
  // Worked by hand from the constants the header documents: (2 W + 5) matrices of C^2
  // doubles, 11 bytes a sample, 24 a record, all of it per evaluation held.
  EXPECT_EQ(evaluation_memory({.samples = 1000, .classes = 10, .world_size = 4}),
            uint64_t(13 * 100 * 8 + 11000));
  EXPECT_EQ(evaluation_memory({.samples = 0, .classes = 3, .world_size = 1, .records = 10}),
            uint64_t(7 * 9 * 8 + 240));
  EXPECT_EQ(evaluation_memory({.samples = 10, .classes = 1, .world_size = 1, .evaluations = 3}),
            uint64_t(3 * (7 * 8 + 110)));
  // Every size at its cap saturates instead of wrapping round to a small number.
  EXPECT_EQ(evaluation_memory({.samples = kMaxSamples,
                               .classes = kMaxClasses,
                               .world_size = kMaxWorldSize,
                               .records = INT64_MAX,
                               .evaluations = int64_t(kMaxEpochs)}),
            UINT64_MAX);
}

TEST(EvaluationMemory, ImageNetSizedRunsFitTheDefaultBudget) {
  // 1000 classes on 64 ranks, 10^7 samples: 133 matrices of 8 MB and 110 MB of per-index
  // arrays, about 1.2 GB; a machine with 4 GiB or more (a default budget of 2 GiB) takes it.
  const EvaluationSize imagenet{.samples = 10000000, .classes = 1000, .world_size = 64};
  EXPECT_LT(evaluation_memory(imagenet), uint64_t(1300) * kMiB);
  if (default_load_budget() >= (uint64_t(2) << 30)) {
    EXPECT_NO_THROW(check_evaluation_budget("imagenet.slrun", imagenet));
  }
  BudgetGuard guard(512 * kMiB);
  EXPECT_INPUT_ERROR(check_evaluation_budget("imagenet.slrun", imagenet), "imagenet.slrun: ",
                     "(an evaluation of 10000000 samples, 1000 classes, 64 ranks), more than the "
                     "512 MiB memory budget");
}

// small_run() with a declared dataset size of 2^32 - 1 (its class counts estimated from the
// records, so nothing else contradicts it), saved: a file of a few KB.
std::string huge_dataset_run(const TempDir& dir) {
  RunFile run = test::small_run();
  run.meta.dataset_size = kMaxSamples;
  run.meta.class_counts_source = "distinct-records";
  const std::string path = dir.path("huge_dataset.slrun");
  save_run_file(run, path);
  return path;
}

TEST(DeclaredSizes, RunFileDatasetSizeIsCheckedBeforeItsArrays) {
  TempDir dir;
  const std::string path = huge_dataset_run(dir);
  BudgetGuard guard(512 * kMiB);
  // Per-index arrays of 11 bytes for 4294967295 samples: 44 GiB.
  EXPECT_INPUT_ERROR(load_run_evaluations(path), path + ": ",
                     "needs 44 GiB of memory (an evaluation of 4294967295 samples, 3 classes, 2 "
                     "ranks, 8 records), more than the 512 MiB memory budget");
  // The honest run loads under the same budget.
  save_run_file(test::small_run(), dir.path("small.slrun"));
  EXPECT_EQ(load_run_evaluations(dir.path("small.slrun")).size(), 1u);
}

TEST(DeclaredSizes, RunFileEpochsAddUp) {
  // Three evaluations of 2 x 10^6 samples each (22 MB each): a 50 MiB budget takes two.
  TempDir dir;
  std::vector<RunFile> epochs;
  for (int64_t e = 0; e < 3; ++e) {
    RunFile run = test::small_run();
    run.meta.dataset_size = 2000000;
    run.meta.class_counts_source = "distinct-records";
    run.meta.epoch = e;
    epochs.push_back(run);
  }
  const std::string path = dir.path("epochs.slrun");
  save_run_epochs(epochs, path);
  BudgetGuard guard(50 * kMiB);
  EXPECT_INPUT_ERROR(load_run_evaluations(path), path + ": epoch 2: ",
                     "(an evaluation of 2000000 samples, 3 classes, 2 ranks, 8 records, beside "
                     "42 MiB for those loaded with it)");
  epochs.pop_back();
  save_run_epochs(epochs, path);
  EXPECT_EQ(load_run_evaluations(path).size(), 2u);
}

// A copy of run file `path`'s members with meta.json's text replaced by edit(text).
template <class Edit>
void rewrite_meta(const std::string& path, Edit edit) {
  NpzMembers members = read_npz(path);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [name, bytes] : members)
    out.emplace_back(name, name == "meta.json" ? edit(bytes) : bytes);
  write_npz(path, out, true);
}

TEST(DeclaredSizes, DeepJsonIsRefusedBeforeItsTreeIsBuilt) {
  // At the limit it parses; one level more is refused, as is a run file whose meta.json
  // holds 5,000,000 nested lists under a key no reader asks for.
  const auto nested = [](size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
  };
  EXPECT_NO_THROW(parse_json(nested(kMaxJsonDepth), "x.json"));
  EXPECT_INPUT_ERROR(parse_json(nested(kMaxJsonDepth + 1), "x.json"),
                     "x.json: ", "nests lists or objects deeper than 256 levels");
  EXPECT_INPUT_ERROR(parse_json("{\"a\": " + nested(kMaxJsonDepth) + "}", "x.json"),
                     "x.json: ", "deeper than 256 levels");
  TempDir dir;
  const std::string path = dir.path("deep.slrun");
  save_run_file(test::small_run(), path);
  rewrite_meta(path, [&](std::string text) {
    const size_t end = text.rfind('}');
    return text.substr(0, end) + ", \"junk\": " + nested(5000000) + "}";
  });
  BudgetGuard guard(100 * kMiB);
  EXPECT_INPUT_ERROR(load_run_evaluations(path), path + ": meta.json: ", "deeper than 256 levels");
  EXPECT_INPUT_ERROR(list_run_evaluations(path), path + ": meta.json: ", "deeper than 256 levels");
}

TEST(DeclaredSizes, ScenarioAndSettingsJsonAreBoundedToo) {
  TempDir dir;
  const std::string path = dir.path("deep.json");
  write_bytes(path, "{\"name\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  EXPECT_INPUT_ERROR(load_scenario_file(path), path + ": ", "deeper than 256 levels");
  EXPECT_INPUT_ERROR(
      parse_recorded_settings(std::string(300, '[') + std::string(300, ']'), "d.npz"),
      "d.npz: settings_json: ", "deeper than 256 levels");
}

TEST(DeclaredSizes, LabelFileClassesAreCheckedWithTheWorldSize) {
  // 60 labels, the last 32767: 32768 classes, a matrix of 8 GiB, (2 x 4 + 5) of them.
  TempDir dir;
  const std::string csv = dir.path("labels.csv");
  std::string text = "label\n";
  for (int i = 0; i < 59; ++i) text += std::to_string(i % 7) + "\n";
  write_bytes(csv, text + "32767\n");
  Scenario s;
  s.dataset = "csv:" + csv;
  s.sampler.world_size = 4;
  BudgetGuard guard(512 * kMiB);
  EXPECT_INPUT_ERROR(simulate(s), csv + ": ",
                     "needs 104 GiB of memory (an evaluation of 60 samples, 32768 classes, 4 "
                     "ranks), more than the 512 MiB memory budget");
  // Prepared inputs (the GUI's, simulate --like's) are checked by evaluate() alike.
  EXPECT_INPUT_ERROR(evaluate(s, load_inputs(s)), csv + ": ", "32768 classes");
  // A small class count passes.
  write_bytes(csv, text + "9\n");
  EXPECT_EQ(simulate(s).classes(), 10);
}

TEST(DeclaredSizes, SyntheticSizesAreCheckedBeforeALabelIsDrawn) {
  BudgetGuard guard(512 * kMiB);
  EXPECT_INPUT_ERROR(load_labels("synthetic:classes=10,n=1000000000,zipf=0"), "--dataset: ",
                     "needs 10 GiB of memory (an evaluation of 1000000000 samples), more than the "
                     "512 MiB memory budget");
  // Labels at the class cap are cheap by themselves; their matrices are the simulation's.
  EXPECT_EQ(load_labels("synthetic:classes=32768,per-class=1").num_classes, kMaxClasses);
  Scenario s;
  s.dataset = "synthetic:classes=1,per-class=4294967295";
  s.sampler.world_size = 8;
  EXPECT_INPUT_ERROR(check_simulation_budget(s, "huge.json"),
                     "huge.json: ", "(an evaluation of 4294967295 samples, 1 class, 8 ranks)");
  const auto declared = declared_dataset("synthetic:counts=3,5,7");
  ASSERT_TRUE(declared);
  EXPECT_EQ(declared->samples, 15);
  EXPECT_EQ(declared->classes, 3);
  EXPECT_FALSE(declared_dataset("csv:labels.csv"));
  s.dataset = "synthetic:classes=10,per-class=50";
  EXPECT_NO_THROW(check_simulation_budget(s, "small.json"));
}

TEST(DeclaredSizes, WrappedSamplerListsCount) {
  // Lightning's wrapper around a WeightedRandomSampler of 4 * 10^9 draws on 500 samples.
  Scenario s;
  s.sampler.kind = SamplerKind::LightningWrapper;
  s.sampler.inner.kind = InnerSampler::Kind::WeightedRandom;
  s.sampler.inner.num_samples = 4000000000;
  BudgetGuard guard(512 * kMiB);
  EXPECT_INPUT_ERROR(simulate(s), "--inner-num-samples: ", "an evaluation of 4000000500 samples");
  EXPECT_INPUT_ERROR(check_simulation_budget(s, "--dataset", "wrapped.json"),
                     "wrapped.json: ", "4000000500 samples");
  // Four ranks drawing with their own seeds hold four lists.
  s.sampler.inner.num_samples = 10000000;
  s.sampler.rank_seeds = {1, 2, 3, 4};
  EXPECT_EQ(simulation_size(s, 500, 10).samples, 500 + 4 * 10000000);
}

// A one-rank .npz dump of `indices` (targets and predictions 0, 1, 2, ...).
std::string write_dump(const TempDir& dir, const std::string& name,
                       const std::vector<int64_t>& indices) {
  std::vector<int64_t> classes(indices.size());
  for (size_t i = 0; i < classes.size(); ++i) classes[i] = int64_t(i % 3);
  const std::vector<int64_t> shape = {int64_t(indices.size())};
  const std::string path = dir.path(name);
  write_npz(path, {{"index.npy", npy_bytes(indices, shape)},
                   {"target.npy", npy_bytes(classes, shape)},
                   {"prediction.npy", npy_bytes(classes, shape)}});
  return path;
}

TEST(DeclaredSizes, DumpIndicesSizeTheImportedDataset) {
  TempDir dir;
  std::vector<int64_t> far;
  for (int64_t i = 0; i < 15; ++i) far.push_back(4294967000 - i);
  const std::string path = write_dump(dir, "far_rank0.npz", far);
  BudgetGuard guard(512 * kMiB);
  EXPECT_INPUT_ERROR(import_epochs({path}, {}), path + ": ",
                     "(an evaluation of 4294967001 samples, 3 classes, 1 rank, 15 records), more "
                     "than the 512 MiB memory budget");
  // Honest indices import under the same budget.
  const std::string near = write_dump(dir, "near_rank0.npz", {0, 1, 2});
  EXPECT_EQ(import_epochs({near}, {}).epochs.front().meta.dataset_size, 3);
}

TEST(DeclaredSizes, ManyRanksLoadInLinearTime) {
  // 65,536 ranks of one record each: 327,681 members. Looking each member up by a walk over
  // the archive's list made this hours; by name it is seconds.
  RunFile run;
  run.meta.source = "real";
  run.meta.backend = "gloo";
  run.meta.classes = 2;
  run.meta.world_size = kMaxWorldSize;
  run.meta.dataset_size = kMaxWorldSize;
  run.meta.class_counts = {kMaxWorldSize / 2, kMaxWorldSize / 2};
  run.records.ranks.resize(size_t(kMaxWorldSize));
  for (int r = 0; r < kMaxWorldSize; ++r)
    run.records.ranks[size_t(r)] = {Record{r, r % 2, r % 2, 0}};
  // The last rank evaluates its sample twice: a within-rank duplicate of rank 65535.
  run.records.ranks.back().push_back(run.records.ranks.back().front());
  run.per_rank = matrices_from_records(run.records, 2, -1);
  run.synced = Matrix(2);
  for (const Matrix& m : run.per_rank) run.synced += m;
  TempDir dir;
  const std::string path = dir.path("ranks.slrun");
  save_run_file(run, path);
  const auto start = std::chrono::steady_clock::now();
  const Evaluation e = load_run_evaluation(path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(e.meta.world_size, kMaxWorldSize);
  EXPECT_EQ(e.diagnosis.duplicated_samples, 1);
  EXPECT_FALSE(e.diagnosis.correct);
  bool within_rank = false;
  for (const Finding& f : e.diagnosis.findings)
    within_rank = within_rank || f.pattern == Pattern::SanityLeak;
  EXPECT_TRUE(within_rank) << "rank 65535's repeat is a repeat within its rank";
  EXPECT_LT(seconds, 120.0);
}

}  // namespace
}  // namespace shardlens

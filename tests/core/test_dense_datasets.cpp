// The synthetic datasets of many counts a sample (core/dataset/dense_synthetic.h) and their
// predictor (predict_cells): the shapes they declare, class counts that are their cells
// summed, the same draw for the same seed, and a padded DistributedSampler over them whose
// synced rows gain exactly the duplicated images' pixels.
#include <gtest/gtest.h>

#include <cctype>
#include <numeric>

#include "core/dataset/dataset_spec.h"
#include "core/dataset/dense_synthetic.h"
#include "core/sim/dense_inputs.h"
#include "core/sim/engine.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

struct Shape {
  const char* spec;
  Task task;
  int64_t samples;
  int32_t classes;
  int ignore_index;
};

class DenseShapes : public testing::TestWithParam<Shape> {};

TEST_P(DenseShapes, DeclareWhatTheyDrawAndEverySampleAddsUp) {
  const Shape& want = GetParam();
  const std::optional<DeclaredDataset> declared = declared_dataset(want.spec);
  ASSERT_TRUE(declared);
  EXPECT_EQ(declared->samples, want.samples);
  EXPECT_EQ(declared->classes, want.classes);
  EXPECT_EQ(declared->task, want.task);
  EXPECT_EQ(declared->ignore_index, want.ignore_index);
  const DenseTruth d = load_dense_truth(want.spec);
  ASSERT_EQ(d.size(), want.samples);
  ASSERT_EQ(d.classes(), want.classes);
  EXPECT_EQ(int32_t(d.class_names.size()), want.classes);
  EXPECT_EQ(d.ignore_index, want.ignore_index);
  for (int64_t i = 0; i < d.size(); ++i) {
    // A dump's check: the sample's cells and its ignored pixels are all its pixels.
    ASSERT_EQ(d.truth.total(i) + d.ignored[size_t(i)], d.sample_size[size_t(i)]) << i;
    for (uint32_t key : d.truth.keys_of(i))
      ASSERT_EQ(key / uint32_t(want.classes), key % uint32_t(want.classes));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sets, DenseShapes,
    testing::Values(Shape{"voc2012:val", Task::Segmentation, 1449, 21, 255},
                    Shape{"cityscapes:val", Task::Segmentation, 500, 19, 255},
                    Shape{"ade20k:val", Task::Segmentation, 2000, 150, 255},
                    Shape{"seg:n=37,classes=6,size=10x12,background=0.5", Task::Segmentation, 37, 6,
                          255},
                    Shape{"conll2003:test", Task::Tokens, 3453, 9, -100},
                    Shape{"tokens:n=40,classes=5,max-length=9", Task::Tokens, 40, 5, -100},
                    Shape{"coco-multilabel:val", Task::Multilabel, 5000, 160, -1},
                    Shape{"multilabel:n=30,labels=7,per-item=2", Task::Multilabel, 30, 14, -1},
                    Shape{"voc2012:val,first=100,seed=3", Task::Segmentation, 100, 21, 255}),
    // Named after the spec (gtest names allow only letters, digits and '_'), not its bytes.
    [](const testing::TestParamInfo<Shape>& info) {
      std::string name = info.param.spec;
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

TEST(DenseDatasets, VocImagesAreBackgroundWithOneToThreeObjectsOfAtMost500Pixels) {
  const DenseTruth d = load_dense_truth("voc2012:val");
  int64_t background = 0, pixels = 0;
  for (int64_t i = 0; i < d.size(); ++i) {
    const auto keys = d.truth.keys_of(i);
    ASSERT_FALSE(keys.empty());
    EXPECT_EQ(keys[0], 0u) << "image " << i << " has no background";
    EXPECT_GE(keys.size(), 2u);
    EXPECT_LE(keys.size(), 4u);
    EXPECT_LE(d.sample_size[size_t(i)], 500 * 500);
    EXPECT_GE(d.sample_size[size_t(i)], 281 * 500);
    background += d.truth.counts_of(i)[0];
    pixels += d.truth.total(i);
  }
  EXPECT_GT(double(background) / double(pixels), 0.55);  // background dominant
}

TEST(DenseDatasets, CityscapesFramesShowManyClassesAndAde20kIsLongTailed) {
  const DenseTruth city = load_dense_truth("cityscapes:val");
  double shown = 0;
  for (int64_t i = 0; i < city.size(); ++i) {
    EXPECT_EQ(city.sample_size[size_t(i)], 1024 * 2048);
    shown += double(city.truth.keys_of(i).size());
  }
  EXPECT_GT(shown / double(city.size()), 10);
  const DenseTruth ade = load_dense_truth("ade20k:val");
  std::vector<int64_t> images(150, 0);
  double pixels = 0;
  for (int64_t i = 0; i < ade.size(); ++i) {
    for (uint32_t key : ade.truth.keys_of(i)) ++images[key / 150];
    pixels += double(ade.sample_size[size_t(i)]);
  }
  EXPECT_GT(images[0], 20 * images[149]);
  EXPECT_GT(images[149], 0);
  EXPECT_NEAR(pixels / double(ade.size()), 512.0 * 512.0, 0.15 * 512 * 512);
}

TEST(DenseDatasets, SentencesAreMostlyOAndItemsHaveTwoToThreeLabels) {
  const DenseTruth conll = load_dense_truth("conll2003:test");
  int64_t words = 0, o = 0, longest = 0;
  for (int64_t i = 0; i < conll.size(); ++i) {
    words += conll.truth.total(i);
    longest = std::max(longest, conll.truth.total(i));
    if (conll.truth.keys_of(i)[0] == 0) o += conll.truth.counts_of(i)[0];
    EXPECT_GE(conll.ignored[size_t(i)], 2);  // [CLS] and [SEP]
  }
  EXPECT_LE(longest, 124);
  EXPECT_NEAR(double(words) / double(conll.size()), 13.4, 1.5);
  EXPECT_NEAR(double(o) / double(words), 0.83, 0.04);
  const DenseTruth coco = load_dense_truth("coco-multilabel:val");
  int64_t present = 0;
  for (int64_t i = 0; i < coco.size(); ++i) {
    ASSERT_EQ(coco.truth.keys_of(i).size(), 80u);
    for (uint32_t key : coco.truth.keys_of(i)) present += (key / 160) % 2;
  }
  EXPECT_NEAR(double(present) / double(coco.size()), 2.9, 0.3);
}

TEST(DenseDatasets, TheSameSeedDrawsTheSameSetAndFirstIsItsPrefix) {
  const DenseTruth a = load_dense_truth("ade20k:val,seed=7");
  const DenseTruth b = load_dense_truth("ade20k:val,seed=7");
  const DenseTruth other = load_dense_truth("ade20k:val,seed=8");
  const DenseTruth first = load_dense_truth("ade20k:val,seed=7,first=50");
  EXPECT_EQ(a.truth.keys, b.truth.keys);
  EXPECT_EQ(a.truth.counts, b.truth.counts);
  EXPECT_NE(a.truth.counts, other.truth.counts);
  ASSERT_EQ(first.size(), 50);
  for (int64_t i = 0; i < 50; ++i) {
    EXPECT_TRUE(std::ranges::equal(first.truth.keys_of(i), a.truth.keys_of(i)));
    EXPECT_TRUE(std::ranges::equal(first.truth.counts_of(i), a.truth.counts_of(i)));
  }
}

Scenario scenario_of(const std::string& dataset, int world_size) {
  Scenario s;
  s.dataset = dataset;
  s.predictor = "noisy:accuracy=0.8,seed=2";
  s.sampler.kind = SamplerKind::Distributed;
  s.sampler.world_size = world_size;
  s.loader.batch_size = 4;
  return s;
}

TEST(DenseDatasets, ClassCountsAreTheCellsSummedAndThePredictorKeepsEachTrueCount) {
  for (const char* spec : {"voc2012:val", "conll2003:test", "coco-multilabel:val"}) {
    const Scenario s = scenario_of(spec, 2);
    const auto in = load_inputs(s);
    const DenseTruth truth = load_dense_truth(spec);
    ASSERT_TRUE(in->cells);
    EXPECT_EQ(in->size(), truth.size());
    std::vector<int64_t> counts(size_t(in->classes()), 0), true_counts(counts.size(), 0);
    const auto c = uint32_t(in->classes());
    for (int64_t i = 0; i < in->size(); ++i) {
      const auto keys = in->cells->keys_of(i);
      const auto n = in->cells->counts_of(i);
      for (size_t k = 0; k < keys.size(); ++k) {
        counts[keys[k] / c] += n[k];
        if (k > 0) {
          EXPECT_LT(keys[k - 1], keys[k]) << spec << " image " << i;
        }
      }
      const auto t = truth.truth.keys_of(i);
      const auto tn = truth.truth.counts_of(i);
      for (size_t k = 0; k < t.size(); ++k) true_counts[t[k] / c] += tn[k];
      EXPECT_EQ(in->cells->total(i), truth.truth.total(i)) << spec << " sample " << i;
      const auto [dt, dp] = in->cells->dominant(i);
      EXPECT_EQ(in->keys[size_t(i)], std::max(dt, 0) * in->classes() + std::max(dp, 0));
    }
    EXPECT_EQ(in->class_counts, counts) << spec;
    EXPECT_EQ(counts, true_counts) << spec;
  }
}

TEST(DenseDatasets, PredictionsArePerSampleAndNoisierForALowerAccuracy) {
  const DenseTruth truth = load_dense_truth("ade20k:val,first=300");
  const auto correct = [&](double accuracy) {
    NoisyParams p;
    p.accuracy = accuracy;
    p.seed = 4;
    std::vector<uint32_t> keys, counts;
    int64_t right = 0, all = 0;
    for (int64_t i = 0; i < truth.size(); ++i) {
      const size_t begin = keys.size();
      predict_cells(&p, truth.task, i, 150, truth.truth.keys_of(i), truth.truth.counts_of(i), keys,
                    counts);
      std::vector<uint32_t> again_keys, again_counts;
      predict_cells(&p, truth.task, i, 150, truth.truth.keys_of(i), truth.truth.counts_of(i),
                    again_keys, again_counts);
      EXPECT_TRUE(std::equal(again_keys.begin(), again_keys.end(), keys.begin() + long(begin)));
      for (size_t k = begin; k < keys.size(); ++k) {
        all += counts[k];
        if (keys[k] / 150 == keys[k] % 150) right += counts[k];
      }
    }
    return double(right) / double(all);
  };
  EXPECT_NEAR(correct(0.9), 0.9, 0.02);
  EXPECT_NEAR(correct(0.6), 0.6, 0.03);
  EXPECT_DOUBLE_EQ(correct(1.0), 1.0);
}

// 1,449 images on 4 ranks: DistributedSampler pads to 1,452 with the order's first 3 images.
// The synced matrix's rows exceed the class counts by exactly those images' pixels.
TEST(DenseDatasets, PaddedDuplicateImagesAddExactlyTheirPixelsToTheSyncedRows) {
  for (bool shuffle : {false, true}) {
    Scenario s = scenario_of("voc2012:val", 4);
    s.sampler.shuffle = shuffle;
    s.sampler.seed = 11;
    const Evaluation e = simulate(s);
    ASSERT_TRUE(e.synced);
    const CellTable& cells = *e.inputs->cells;
    std::vector<double> extra(21, 0);
    int duplicated = 0;
    for (int64_t i = 0; i < cells.rows(); ++i) {
      const int times = e.times_evaluated[size_t(i)];
      ASSERT_GE(times, 1);
      if (times == 1) continue;
      duplicated += times - 1;
      for (size_t k = cells.begin(i); k < cells.end(i); ++k)
        extra[cells.keys[k] / 21] += double(times - 1) * cells.counts[k];
    }
    EXPECT_EQ(duplicated, 3);
    if (!shuffle) {
      EXPECT_EQ(e.times_evaluated[0] + e.times_evaluated[1] + e.times_evaluated[2], 6);
    }
    const std::vector<double> rows = e.synced->row_sums();
    for (int32_t k = 0; k < 21; ++k)
      EXPECT_EQ(rows[size_t(k)], double(e.meta.class_counts[size_t(k)]) + extra[size_t(k)]) << k;
    EXPECT_GT(std::accumulate(extra.begin(), extra.end(), 0.0), 0);
    EXPECT_EQ(e.meta.ignore_index, 255);
    EXPECT_EQ(e.meta.task, Task::Segmentation);
  }
}

TEST(DenseDatasets, TheDatasetsIgnoreIndexIsReportedUnlessTheScenarioNamesOne) {
  Scenario s = scenario_of("conll2003:test,first=40", 2);
  EXPECT_EQ(simulate(s).meta.ignore_index, -100);
  s = scenario_of("voc2012:val,first=40", 2);
  s.ignore_index = 0;  // background ignored: its row is empty
  const Evaluation e = simulate(s);
  EXPECT_EQ(e.meta.ignore_index, 0);
  EXPECT_EQ(e.synced->row_sums()[0], 0);
  EXPECT_GT(e.synced->row_sums()[15] + e.synced->row_sums()[9], 0);
}

TEST(DenseDatasets, BadSpecsAndFilePredictorsAreRefusedNamingWhatToFix) {
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { load_dense_truth("voc2012:train"); }).find("voc2012:val"),
            std::string::npos);
  EXPECT_NE(message([] { load_dense_truth("seg:n=5"); }).find("classes=K"), std::string::npos);
  EXPECT_NE(message([] { load_dense_truth("cityscapes:val,first=501"); }).find("first=501"),
            std::string::npos);
  EXPECT_NE(message([] { load_dense_truth("ade20k:val,zipf=2"); }).find("zipf"), std::string::npos);
  EXPECT_NE(message([] { load_dense_truth("seg:n=5,classes=3,per-image=3-1"); }).find("backwards"),
            std::string::npos);
  Scenario s = scenario_of("voc2012:val,first=10", 2);
  s.predictor = "npy:/nonexistent.npy";
  EXPECT_NE(message([&] { load_inputs(s); }).find("perfect or noisy"), std::string::npos);
  EXPECT_TRUE(is_dense_dataset("seg:n=5,classes=2"));
  EXPECT_FALSE(is_dense_dataset("synthetic:classes=3,per-class=2"));
  // The shard plan of a dense set reads its size through load_labels.
  EXPECT_EQ(load_labels("cityscapes:val,first=12").size(), 12);
}

}  // namespace
}  // namespace shardlens

// Segmentation, token and multilabel metrics (core/report/task_metrics.h) on hand-worked
// matrices: every expected value is derived in the comments from torchmetrics 1.9's formulas
// (the random comparison with torchmetrics itself is tests/frameworks/task_metrics_oracle.py).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/report/export.h"
#include "core/report/report.h"
#include "core/report/task_metrics.h"
#include "core/sim/engine.h"
#include "tests/core/cell_fixtures.h"

namespace shardlens {
namespace {

Matrix matrix(int32_t c, std::vector<double> cells) {
  Matrix m(c);
  m.cells = std::move(cells);
  return m;
}

// A class that never occurs (row and column 0) leaves the mIoU and the macro means.
//   [4 1 0]   rows 5, 2, 0; columns 4, 3, 0
//   [0 2 0]   IoU0 = 4 / (4 + 5 - 4) = 4/5, IoU1 = 2 / (3 + 2 - 2) = 2/3, IoU2 = 0/0 = 0
//   [0 0 0]
TEST(TaskMetrics, ClassThatNeverOccursLeavesTheMeans) {
  const TaskScores s = task_scores(matrix(3, {4, 1, 0, 0, 2, 0, 0, 0, 0}), Task::Segmentation, -1);
  EXPECT_DOUBLE_EQ(s.iou[0], 4.0 / 5.0);
  EXPECT_DOUBLE_EQ(s.iou[1], 2.0 / 3.0);
  EXPECT_EQ(s.iou[2], 0.0);
  EXPECT_DOUBLE_EQ(s.miou, (4.0 / 5.0 + 2.0 / 3.0) / 2.0);
  EXPECT_DOUBLE_EQ(s.accuracy, 6.0 / 7.0);
  // Recall 4/5 and 2/2; class 2 has tp + fp + fn = 0.
  EXPECT_DOUBLE_EQ(s.mean_class_accuracy, (4.0 / 5.0 + 1.0) / 2.0);
  // F1 = 2tp / (2tp + fp + fn): 8 / 9 and 4 / 5.
  EXPECT_DOUBLE_EQ(s.macro_f1, (8.0 / 9.0 + 4.0 / 5.0) / 2.0);
  // Precision 4/4 and 2/3.
  EXPECT_DOUBLE_EQ(s.macro_precision, (1.0 + 2.0 / 3.0) / 2.0);
}

// Nothing counted: torchmetrics' Jaccard divides by a zero weight sum (NaN); the others use
// a safe division (0).
TEST(TaskMetrics, AllZeroMatrixGivesNanMiouAndZeroRatios) {
  const TaskScores s = task_scores(Matrix(4), Task::Segmentation, 255);
  EXPECT_TRUE(std::isnan(s.miou));
  EXPECT_EQ(s.iou, std::vector<double>(4, 0.0));
  EXPECT_EQ(s.accuracy, 0.0);
  EXPECT_EQ(s.mean_class_accuracy, 0.0);
  EXPECT_EQ(s.macro_f1, 0.0);
}

// ignore_index 1 is a class: its row is empty (its pixels were never counted) but its column
// holds the pixels predicted as it.
//   [5 2 0]   rows 7, 0, 5; columns 6, 3, 3
//   [0 0 0]   IoU0 = 5 / (6 + 7 - 5) = 5/8, IoU1 = 0 / 3 = 0, IoU2 = 3 / (3 + 5 - 3) = 3/5
//   [1 1 3]
TEST(TaskMetrics, IgnoreIndexInsideTheClassesLeavesOnlyTheJaccardMean) {
  const Matrix m = matrix(3, {5, 2, 0, 0, 0, 0, 1, 1, 3});
  const TaskScores ignored = task_scores(m, Task::Segmentation, 1);
  EXPECT_DOUBLE_EQ(ignored.miou, (5.0 / 8.0 + 3.0 / 5.0) / 2.0);  // class 1's weight is 0
  // MulticlassAccuracy drops only the ignored targets: class 1 has fp = 3, so it is averaged
  // with its recall 0 / 0 = 0.
  EXPECT_DOUBLE_EQ(ignored.mean_class_accuracy, (5.0 / 7.0 + 0.0 + 3.0 / 5.0) / 3.0);
  EXPECT_DOUBLE_EQ(ignored.accuracy, 8.0 / 12.0);
  // No ignore_index, or one outside the classes: class 1 is present through its column.
  for (int none : {-1, 255, -100})
    EXPECT_DOUBLE_EQ(task_scores(m, Task::Segmentation, none).miou,
                     (5.0 / 8.0 + 0.0 + 3.0 / 5.0) / 3.0);
}

// Masks of two classes: class 1's IoU is what BinaryJaccardIndex reports.
//   [5 1]   IoU1 = 3 / (3 + 1 + 2) = 1/2; IoU0 = 5 / (7 + 6 - 5) = 5/8
//   [2 3]
TEST(TaskMetrics, TwoClassSegmentationReportsTheBinaryIou) {
  const TaskScores s = task_scores(matrix(2, {5, 1, 2, 3}), Task::Segmentation, 255);
  EXPECT_DOUBLE_EQ(s.binary_iou, 1.0 / 2.0);
  EXPECT_DOUBLE_EQ(s.miou, (5.0 / 8.0 + 1.0 / 2.0) / 2.0);
  EXPECT_TRUE(std::isnan(task_scores(Matrix(3), Task::Segmentation, -1).binary_iou));
}

// Two labels as four classes (2l + t): label 0 tn 3, fp 1, fn 2, tp 4; label 1 always absent
// and predicted absent (tn 10).
TEST(TaskMetrics, MultilabelAveragesEveryLabel) {
  Matrix m(4);
  m.at(0, 0) = 3;   // label 0 absent, predicted absent
  m.at(0, 1) = 1;   // absent, predicted present
  m.at(1, 0) = 2;   // present, predicted absent
  m.at(1, 1) = 4;   // present, predicted present
  m.at(2, 2) = 10;  // label 1
  const TaskScores s = task_scores(m, Task::Multilabel, -1);
  ASSERT_EQ(s.f1.size(), 2u);
  EXPECT_DOUBLE_EQ(s.precision[0], 4.0 / 5.0);
  EXPECT_DOUBLE_EQ(s.recall[0], 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(s.f1[0], 8.0 / 11.0);  // 2 * 4 / (8 + 2 + 1)
  EXPECT_EQ(s.f1[1], 0.0);
  // Multilabel macro weighs every label, label 1 (tp + fp + fn = 0) too.
  EXPECT_DOUBLE_EQ(s.macro_f1, (8.0 / 11.0) / 2.0);
  EXPECT_DOUBLE_EQ(s.macro_precision, (4.0 / 5.0) / 2.0);
  EXPECT_DOUBLE_EQ(s.accuracy, 17.0 / 20.0);  // (4 + 3 + 10) right of 20 decisions
  EXPECT_TRUE(s.iou.empty());
}

// The five images of test_sample_cells, 3 classes, as (true, predicted) pixel histograms:
//   0: (0,0) x 10, (1,1) x 5        3: (2,2) x 7
//   1: (1,1) x 4,  (1,2) x 2        4: (0,0) x 3, (2,0) x 1
//   2: (0,0) x 6
std::shared_ptr<const DatasetInputs> five_images(Task task) {
  return fixtures::cell_dataset(3,
                                {{{0, 0, 10}, {1, 1, 5}},
                                 {{1, 1, 4}, {1, 2, 2}},
                                 {{0, 0, 6}},
                                 {{2, 2, 7}},
                                 {{0, 0, 3}, {2, 0, 1}}},
                                {19, 11, 8}, task);
}

Scenario two_ranks() {
  Scenario s;
  s.sampler.kind = SamplerKind::Distributed;
  s.sampler.world_size = 2;
  s.sampler.shuffle = false;
  s.loader.batch_size = 1;
  return s;
}

// DistributedSampler, unshuffled, 5 images on 2 ranks: rank 0 images 0, 2, 4; rank 1 images
// 1, 3 and 0 again (padding).
//   expected [19 0 0; 0 9 2; 1 0 7]:   IoU 19/20, 9/11, 7/10;      accuracy 35/38
//   synced   [29 0 0; 0 14 2; 1 0 7]:  IoU 29/30, 14/16, 7/10;     accuracy 50/53
//   rank 0   [19 0 0; 0 5 0; 1 0 0]:   IoU 19/20, 5/5, 0/1;        accuracy 24/25
//   rank 1   [10 0 0; 0 9 2; 0 0 7]:   IoU 10/10, 9/11, 7/9;       accuracy 26/28
TEST(TaskMetrics, PaddedImageReportedTrueAndPerRankMean) {
  const Evaluation e = evaluate(two_ranks(), five_images(Task::Segmentation));
  const TaskMetrics t = task_metrics(e);
  ASSERT_FALSE(t.empty());
  const TaskMetric* miou = t.find("miou");
  ASSERT_TRUE(miou && miou->reported && miou->truth && miou->per_rank_mean);
  EXPECT_DOUBLE_EQ(*miou->truth, (19.0 / 20 + 9.0 / 11 + 7.0 / 10) / 3);
  EXPECT_DOUBLE_EQ(*miou->reported, (29.0 / 30 + 14.0 / 16 + 7.0 / 10) / 3);
  const double rank0 = (19.0 / 20 + 1.0 + 0.0) / 3, rank1 = (1.0 + 9.0 / 11 + 7.0 / 9) / 3;
  EXPECT_DOUBLE_EQ(*miou->per_rank_mean, (rank0 + rank1) / 2);
  const TaskMetric* accuracy = t.find("accuracy");
  ASSERT_TRUE(accuracy);
  EXPECT_EQ(accuracy->name, "pixel accuracy");
  EXPECT_DOUBLE_EQ(*accuracy->truth, 35.0 / 38);
  EXPECT_DOUBLE_EQ(*accuracy->reported, 50.0 / 53);
  EXPECT_DOUBLE_EQ(*accuracy->per_rank_mean, (24.0 / 25 + 26.0 / 28) / 2);
  EXPECT_EQ(t.ranks_averaged, 2);
  // Per class: the padded image moved classes 0 and 1, class 2 is as true.
  const std::vector<ClassDifference> worst = largest_differences(t.per_class.front(), 10);
  ASSERT_EQ(worst.size(), 2u);
  EXPECT_EQ(worst[0].index, 1);  // 14/16 - 9/11 = 0.0568 > 29/30 - 19/20 = 0.0167
  EXPECT_DOUBLE_EQ(worst[0].difference(), 14.0 / 16 - 9.0 / 11);
  EXPECT_EQ(worst[1].index, 0);
}

// An export directory holds the task's metrics beside the classification ones; a
// classification export writes none.
TEST(TaskMetrics, ExportsWriteThemAsTaskMetricsJson) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("shardlens-task-metrics-" + std::to_string(::getpid()));
  const Evaluation e = evaluate(two_ranks(), five_images(Task::Segmentation));
  export_data(e, (dir / "seg").string(), {"csv"});
  std::ifstream in(dir / "seg" / "task_metrics.json");
  ASSERT_TRUE(in) << "no task_metrics.json";
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["task"], "segmentation");
  EXPECT_DOUBLE_EQ(j["metrics"]["miou"]["true"].get<double>(),
                   (19.0 / 20 + 9.0 / 11 + 7.0 / 10) / 3);
  EXPECT_TRUE(export_writes("task_metrics.json"));
  Scenario s = two_ranks();
  s.dataset = "synthetic:counts=3,2";
  export_data(simulate(s), (dir / "cls").string(), {"csv"});
  EXPECT_FALSE(std::filesystem::exists(dir / "cls" / "task_metrics.json"));
  std::filesystem::remove_all(dir);
}

TEST(TaskMetrics, ReportsShowTheBlockAndClassificationKeepsItsOwn) {
  const Evaluation e = evaluate(two_ranks(), five_images(Task::Segmentation));
  const std::string text = report_text(e);
  EXPECT_NE(text.find("mIoU reported 0.8472, true 0.8227 (per-rank mean 0.7577)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pixel accuracy reported"), std::string::npos);
  EXPECT_NE(text.find("Row sums, pixels"), std::string::npos);
  EXPECT_EQ(text.find("macro F1   "), std::string::npos);  // not the classification block
  const auto j = report_json(e);
  ASSERT_TRUE(j.contains("task_metrics"));
  const auto& tm = j["task_metrics"];
  EXPECT_EQ(tm["task"], "segmentation");
  EXPECT_EQ(tm["unit"], "pixels");
  EXPECT_DOUBLE_EQ(tm["metrics"]["miou"]["true"].get<double>(),
                   (19.0 / 20 + 9.0 / 11 + 7.0 / 10) / 3);
  EXPECT_EQ(tm["per_class"]["iou"]["reported"].size(), 3u);
  EXPECT_EQ(tm["largest_differences"].size(), 2u);

  Scenario s;
  s.dataset = "synthetic:counts=10,3";
  s.sampler.world_size = 4;
  const Evaluation classification = simulate(s);
  EXPECT_TRUE(task_metrics(classification).empty());
  EXPECT_FALSE(report_json(classification).contains("task_metrics"));
  EXPECT_NE(report_text(classification).find("Metrics (reported vs expected"), std::string::npos);
}

// A dense run said to log its metric per batch: the report says that value is not checked
// rather than pass over it (only a classification's per-batch accuracy is modelled).
TEST(TaskMetrics, PerBatchLoggedDenseMetricIsSaidUnchecked) {
  Scenario s = two_ranks();
  const std::string unchecked = "(--logged-accuracy per-batch) is not checked";
  EXPECT_EQ(report_text(evaluate(s, five_images(Task::Segmentation))).find(unchecked),
            std::string::npos);
  s.logged_accuracy = LoggedAccuracy::PerBatch;
  const std::string text = report_text(evaluate(s, five_images(Task::Segmentation)));
  EXPECT_NE(text.find("the mIoU a run logs per batch " + unchecked), std::string::npos) << text;
}

// Tokens: the accuracy is the token accuracy, F1 leads the per-class metrics. One rank only:
// no per-rank mean (nothing is averaged).
TEST(TaskMetrics, TokensOnOneRankHaveNoPerRankMean) {
  Scenario s = two_ranks();
  s.sampler.world_size = 1;
  const Evaluation e = evaluate(s, five_images(Task::Tokens));
  const TaskMetrics t = task_metrics(e);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.overall.front().name, "token accuracy");
  EXPECT_DOUBLE_EQ(*t.overall.front().truth, 35.0 / 38);
  EXPECT_FALSE(t.overall.front().per_rank_mean);
  EXPECT_EQ(t.per_class.front().key, "f1");
  EXPECT_EQ(t.ranks_averaged, 0);
}

// A run that ended before its sync has no reported value; the text says so.
TEST(TaskMetrics, NoSyncedMatrixHasNoReportedValue) {
  Evaluation e = evaluate(two_ranks(), five_images(Task::Segmentation));
  e.synced.reset();
  const TaskMetrics t = task_metrics(e);
  EXPECT_FALSE(t.find("miou")->reported);
  EXPECT_TRUE(t.find("miou")->truth);
  EXPECT_NE(task_metrics_text(t).find("mIoU reported (none), true 0.8227"), std::string::npos);
  EXPECT_TRUE(task_metrics_json(t)["metrics"]["miou"]["reported"].is_null());
}

}  // namespace
}  // namespace shardlens

// Metrics from a confusion matrix with torchmetrics' conventions (hand-worked cases; the
// numpy comparison over many simulations is tests/oracle/framework_oracle.py --only metrics).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/report/export.h"
#include "core/report/metrics.h"
#include "core/report/report.h"
#include "core/sim/engine.h"

using namespace shardlens;

namespace {

Matrix matrix(int32_t c, std::vector<double> cells) {
  Matrix m(c);
  m.cells = std::move(cells);
  return m;
}

}  // namespace

TEST(Metrics, HandWorkedThreeClasses) {
  // rows = true: class 0: 5 right, 1 as class 1; class 1: 3 right, 2 as class 2; class 2: none.
  const Metrics m = compute_metrics(matrix(3, {5, 1, 0, 0, 3, 2, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(m.accuracy, 8.0 / 11.0);
  EXPECT_DOUBLE_EQ(m.precision[0], 1.0);
  EXPECT_DOUBLE_EQ(m.precision[1], 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(m.precision[2], 0.0);  // 0 / 2
  EXPECT_DOUBLE_EQ(m.recall[0], 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.recall[1], 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(m.recall[2], 0.0);  // 0 / 0: zero division is 0
  EXPECT_DOUBLE_EQ(m.f1[0], 10.0 / 11.0);
  EXPECT_DOUBLE_EQ(m.f1[1], 6.0 / 9.0);
  EXPECT_DOUBLE_EQ(m.f1[2], 0.0);
  // Class 2 has fp = 2, so it takes part in the macro average.
  EXPECT_DOUBLE_EQ(m.macro_f1, (10.0 / 11.0 + 6.0 / 9.0) / 3.0);
  EXPECT_DOUBLE_EQ(m.weighted_f1, (6 * 10.0 / 11.0 + 5 * 6.0 / 9.0) / 11.0);
}

TEST(Metrics, AbsentClassLeavesTheMacroAverage) {
  const Metrics m = compute_metrics(matrix(3, {4, 0, 0, 0, 2, 0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(m.macro_f1, 1.0);  // class 2: tp + fp + fn = 0, not averaged
  EXPECT_DOUBLE_EQ(compute_metrics(Matrix(2)).accuracy, 0.0);
}

TEST(Metrics, ReportJsonExportAndRows) {
  Scenario s;
  s.dataset = "synthetic:counts=10,3";
  s.predictor = "noisy:accuracy=0.7,seed=5";
  s.sampler.world_size = 4;  // 13 % 4: padding duplicates change the metrics
  const Evaluation e = simulate(s);
  const auto j = report_json(e);
  ASSERT_TRUE(j.contains("metrics"));
  for (const char* side : {"reported", "expected"}) {
    for (const char* key : {"accuracy", "precision", "recall", "f1", "macro_f1", "weighted_f1"})
      EXPECT_TRUE(j["metrics"][side].contains(key)) << side << " " << key;
  }
  EXPECT_DOUBLE_EQ(j["metrics"]["expected"]["accuracy"].get<double>(),
                   compute_metrics(*e.expected).accuracy);
  const auto rows = metric_rows(e);
  ASSERT_FALSE(rows.empty());
  for (size_t i = 1; i < rows.size(); ++i)
    EXPECT_GE(std::abs(rows[i - 1].difference.value_or(0)),
              std::abs(rows[i].difference.value_or(0)));
  EXPECT_NE(report_text(e).find("Metrics (reported vs expected"), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / "shardlens_metrics_export";
  std::filesystem::remove_all(dir);
  const auto written = export_data(e, dir.string(), {"csv"});
  EXPECT_TRUE(std::filesystem::exists(dir / "metrics.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "metrics.json"));
  std::filesystem::remove_all(dir);
}

namespace {

bool has_row(const std::vector<MetricRow>& rows, const std::string& name) {
  for (const MetricRow& r : rows)
    if (r.name == name) return true;
  return false;
}

// 10 samples on 4 ranks of an uneven sampler (3, 3, 2, 2): the ranks' mean accuracy is not
// the accuracy, so a logged row would differ from it.
Scenario uneven_ranks() {
  Scenario s;
  s.dataset = "synthetic:classes=5,per-class=2";
  s.predictor = "noisy:accuracy=0.6,seed=2";
  s.sampler.kind = SamplerKind::Unrepeated;
  s.sampler.world_size = 4;
  s.loader.batch_size = 2;
  return s;
}

}  // namespace

// A logged value is a row of the metrics only where the run logged it: a run that logged
// nothing has no "mean of ranks" in its reported column.
TEST(Metrics, LoggedRowsOnlyWhenTheRunLoggedThem) {
  Scenario s = uneven_ranks();
  const Evaluation quiet = simulate(s);
  EXPECT_FALSE(has_row(metric_rows(quiet), kRankMeanAccuracyName));
  EXPECT_FALSE(has_row(metric_rows(quiet), kBatchLoggedAccuracyName));
  EXPECT_EQ(metrics_csv(quiet).find("accuracy_rank_mean"), std::string::npos);
  EXPECT_EQ(report_text(quiet).find("mean of ranks"), std::string::npos);

  s.logged_accuracy = LoggedAccuracy::RankMean;
  const Evaluation logged = simulate(s);
  EXPECT_TRUE(has_row(metric_rows(logged), kRankMeanAccuracyName));
  EXPECT_FALSE(has_row(metric_rows(logged), kBatchLoggedAccuracyName));
  EXPECT_NE(metrics_csv(logged).find("accuracy_rank_mean"), std::string::npos);

  s.logged_accuracy = LoggedAccuracy::Both;
  const auto both = metric_rows(simulate(s));
  EXPECT_TRUE(has_row(both, kRankMeanAccuracyName));
  EXPECT_TRUE(has_row(both, kBatchLoggedAccuracyName));
}

// A difference within rounding noise of zero prints and sorts as 0, never "-0.0000" first.
TEST(Metrics, DifferenceOfZeroIsUnsignedAndSortsAsZero) {
  EXPECT_EQ(difference_text(-0.0), "0.0000");
  EXPECT_EQ(difference_text(-1e-17), "0.0000");
  EXPECT_EQ(difference_text(0.0125), "+0.0125");
  EXPECT_EQ(difference_text(-0.05), "-0.0500");
  // A real change too small for four decimals keeps its sign and size.
  EXPECT_EQ(difference_text(-3.3e-5), "-3.3e-05");
  // Padding duplicates on 4 ranks (13 samples): whatever the rows, none says "-0.0000", and
  // every zero difference sorts after every non-zero one.
  Scenario s;
  s.dataset = "synthetic:counts=10,3";
  s.predictor = "noisy:accuracy=0.7,seed=5";
  s.sampler.world_size = 4;
  const Evaluation e = simulate(s);
  EXPECT_EQ(report_text(e).find("-0.0000"), std::string::npos);
  bool zero_seen = false;
  for (const MetricRow& r : metric_rows(e)) {
    ASSERT_TRUE(r.difference.has_value());
    if (*r.difference == 0) {
      zero_seen = true;
      EXPECT_FALSE(std::signbit(*r.difference)) << r.name;
    } else {
      EXPECT_FALSE(zero_seen) << r.name << " sorts after a zero difference";
    }
  }
  EXPECT_TRUE(zero_seen) << "no zero difference: the sort was not checked";
}

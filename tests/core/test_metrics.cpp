// Metrics from a confusion matrix with torchmetrics' conventions (hand-worked cases; the
// numpy comparison over many simulations is tests/oracle/framework_oracle.py --only metrics).
#include <gtest/gtest.h>

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

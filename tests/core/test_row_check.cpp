// The one row check (core/diagnosis/row_check.h): whole counts compared exactly, fractions
// within one tolerance, and an evaluation's check the one its diagnosis and report read.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/diagnosis/row_check.h"
#include "core/evaluation/framework_hazards.h"
#include "core/report/report.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "tests/common/small_run.h"
#include "tests/common/test_rows.h"

namespace shardlens {
namespace {

Matrix matrix(int32_t classes, const std::vector<double>& cells) {
  Matrix m(classes);
  m.cells = cells;
  return m;
}

struct SumRow {
  std::string name;
  double observed, truth;
  bool differs;
};

class SumDiffers : public ::testing::TestWithParam<SumRow> {};

TEST_P(SumDiffers, ComparesWholeNumbersExactlyAndFractionsWithinTheTolerance) {
  const SumRow& row = GetParam();
  EXPECT_EQ(sum_differs(row.observed, row.truth), row.differs);
}

const double kInf = std::numeric_limits<double>::infinity();

INSTANTIATE_TEST_SUITE_P(
    RowCheck, SumDiffers,
    ::testing::Values(SumRow{"equal counts", 50, 50, false}, SumRow{"one more", 51, 50, true},
                      // A relative tolerance would call these equal: counts are exact.
                      SumRow{"10^15 off by one", 1e15 + 1, 1e15, true},
                      SumRow{"fractions within the tolerance", 2 + 1e-12, 2, false},
                      SumRow{"fractions of a large row within it", 1e6 + 1e-6, 1e6, false},
                      SumRow{"fractions beyond it", 2 + 1e-6, 2, true},
                      SumRow{"infinity", kInf, 5, true},
                      SumRow{"nan", std::numeric_limits<double>::quiet_NaN(), 5, true}),
    test::NamedRow{});

TEST(RowCheck, ATenToTheFifteenRowOffByOneIsWrong) {
  const Matrix m = matrix(2, {1e15, 1, 0, 7});
  const RowCheck check = check_rows(m, {1000000000000000, 7});
  EXPECT_EQ(check.wrong, (std::vector<bool>{true, false}));
  EXPECT_EQ(check.wrong_rows, std::vector<int32_t>{0});
  EXPECT_EQ(check.off[0], 1.0);
  EXPECT_EQ(check.observed[0], 1e15 + 1);
  EXPECT_EQ(check.truth, (std::vector<int64_t>{1000000000000000, 7}));
}

// Past 2^53 a double sum loses the one: 2^53 + 1 rounds to 2^53. The int64 sum keeps it.
TEST(RowCheck, WholeRowsAreSummedInIntegersPastADoublesPrecision) {
  const double two53 = 9007199254740992.0;
  const RowCheck check = check_rows(matrix(2, {two53, 1, 0, 0}), {9007199254740992, 0});
  EXPECT_EQ(check.observed[0], two53);  // as a double prints it
  EXPECT_TRUE(check.wrong[0]);
  EXPECT_EQ(check.off[0], 1.0);
}

// A normalize-then-sum sync's matrix: each rank's rows sum to one, in rounded fractions.
TEST(RowCheck, AFractionalRowWithinTheToleranceIsRight) {
  const Matrix m = matrix(3, {0.7, 0.2, 0.1, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0.5, 0.25, 0.2});
  const RowCheck check = check_rows(m, {1, 1, 1});
  EXPECT_LT(check.observed[0], 1.0);  // 0.7 + 0.2 + 0.1 rounds below one
  EXPECT_FALSE(check.wrong[0]);
  EXPECT_FALSE(check.wrong[1]);
  EXPECT_TRUE(check.wrong[2]);  // 0.95
  EXPECT_EQ(check.wrong_rows, std::vector<int32_t>{2});
  EXPECT_NEAR(check.off[2], -0.05, 1e-12);
}

TEST(RowCheck, AnOverflowedCounterRowIsWrong) {
  const RowCheck check = check_rows(matrix(2, {kInf, 0, 0, 3}), {4, 3});
  EXPECT_EQ(check.wrong_rows, std::vector<int32_t>{0});
  EXPECT_EQ(check.by_error.front(), 0);
}

TEST(RowCheck, RowsAreOrderedByErrorLargestFirstTiesInClassOrder) {
  // Rows off by -1, +3, 0, +1, -3.
  const Matrix m = matrix(5, {
                                 1, 0, 0, 0, 0,  //
                                 0, 5, 0, 0, 0,  //
                                 0, 0, 2, 0, 0,  //
                                 0, 0, 0, 3, 0,  //
                                 0, 0, 0, 0, 0,  //
                             });
  const RowCheck check = check_rows(m, {2, 2, 2, 2, 3});
  EXPECT_EQ(check.off, (std::vector<double>{-1, 3, 0, 1, -3}));
  EXPECT_EQ(check.by_error, (std::vector<int32_t>{1, 4, 0, 3, 2}));
  EXPECT_EQ(check.wrong_rows, (std::vector<int32_t>{0, 1, 3, 4}));
}

TEST(RowCheck, TheRanksSumIsCheckedAsOneMatrix) {
  const Matrix a = matrix(2, {1, 1, 0, 1}), b = matrix(2, {1, 0, 0, 2});
  const RowCheck check = check_rows({&a, &b}, {3, 2}, 2);
  EXPECT_EQ(check.observed, (std::vector<double>{3, 3}));
  EXPECT_EQ(check.wrong_rows, std::vector<int32_t>{1});
}

TEST(RowCheck, AClassPastTheCountsCountsZero) {
  const RowCheck check = check_rows(matrix(2, {1, 0, 0, 1}), {1});
  EXPECT_EQ(check.truth, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(check.wrong_rows, std::vector<int32_t>{1});
}

// small_run: rank 1's padding repeat of index 0 puts 4 in row 0, whose class has 3.
TEST(RowCheck, AnEvaluationsCheckIsTheOneItsDiagnosisAndReportRead) {
  const Evaluation e = evaluation_from_run(test::small_run(), "small.slrun");
  EXPECT_EQ(e.row_check.observed, e.synced->row_sums());
  EXPECT_EQ(e.row_check.wrong_rows, std::vector<int32_t>{0});
  EXPECT_EQ(e.row_check.off[0], 1.0);
  EXPECT_EQ(e.diagnosis.mismatched_rows, e.row_check.wrong_rows);
  const nlohmann::json rows = report_json(e)["row_sums"];
  EXPECT_EQ(rows["mismatched"], nlohmann::json::array({0}));
  EXPECT_EQ(rows["observed"], nlohmann::json::array({4, 2, 2}));
}

TEST(RowCheck, ARunThatNeverSyncedIsCheckedOnWhatItsRanksCounted) {
  RunFile run = test::small_run();
  run.synced = Matrix();
  run.meta.complete = false;
  run.meta.incomplete_reason = "rank 1 failed";
  const Evaluation e = evaluation_from_run(run, "partial.slrun");
  ASSERT_FALSE(e.synced);
  EXPECT_EQ(e.row_check.observed, (std::vector<double>{4, 2, 2}));
  EXPECT_EQ(e.row_check.wrong_rows, std::vector<int32_t>{0});
  EXPECT_TRUE(e.diagnosis.mismatched_rows.empty());  // no reported matrix to diagnose
  EXPECT_TRUE(report_json(e)["row_sums"]["mismatched"].empty());
}

// Uneven Accelerate steps: the per-step gather would hang, so the synced matrix is dropped
// after the evaluation is complete; the check then reads what the ranks counted together (a
// synced matrix that differs from that in row 0 must not stay in the check).
TEST(RowCheck, ASyncDroppedForUnevenStepsIsCheckedOnWhatTheRanksCounted) {
  Evaluation e = simulate(load_preset("uneven-steps"));
  ASSERT_FALSE(e.synced);
  const std::vector<double> ranks = e.row_check.observed;
  Matrix doctored(e.classes());
  doctored.at(0, 0) = 1e6;
  e.synced = doctored;
  e.row_check = check_evaluation_rows(e);
  ASSERT_EQ(e.row_check.observed[0], 1e6);
  report_framework_hazards(e);
  ASSERT_FALSE(e.synced);
  EXPECT_EQ(e.row_check.observed, ranks);
  std::vector<double> summed(size_t(e.classes()), 0.0);
  for (const Matrix& m : e.per_rank)
    for (int32_t r = 0; r < m.classes; ++r) summed[size_t(r)] += m.row_sums()[size_t(r)];
  EXPECT_EQ(ranks, summed);
}

}  // namespace
}  // namespace shardlens

// The most confused pairs, the worst rows and the confusion class order
// (core/report/confusion_ranking.h) against matrices worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/diagnosis/row_check.h"
#include "core/report/confusion_ranking.h"
#include "core/report/report.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"

namespace shardlens {
namespace {

Matrix matrix(int32_t classes, const std::vector<double>& cells) {
  Matrix m(classes);
  m.cells = cells;
  return m;
}

struct Cell {
  int32_t t, p;
  double count;
};

std::vector<Cell> cells_of(const std::vector<ConfusedPair>& pairs) {
  std::vector<Cell> out;
  for (const ConfusedPair& p : pairs) out.push_back({p.true_class, p.predicted, p.count});
  return out;
}

void expect_cells(const std::vector<ConfusedPair>& pairs, const std::vector<Cell>& expected) {
  const std::vector<Cell> got = cells_of(pairs);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].t, expected[i].t) << "pair " << i;
    EXPECT_EQ(got[i].p, expected[i].p) << "pair " << i;
    EXPECT_EQ(got[i].count, expected[i].count) << "pair " << i;
  }
}

// Off the diagonal: (0,1)=2 (0,2)=7 (1,0)=3 (1,2)=0 (2,0)=7 (2,1)=1.
const Matrix kThree = matrix(3, {5, 2, 7,  //
                                 3, 9, 0,  //
                                 7, 1, 4});

TEST(MostConfused, ListsOffDiagonalCellsLargestFirstTiesByTrueThenPredictedClass) {
  // The two 7s tie: true class 0 before 2. The empty cell (1,2) is no confusion.
  expect_cells(most_confused(kThree, 10), {{0, 2, 7}, {2, 0, 7}, {1, 0, 3}, {0, 1, 2}, {2, 1, 1}});
}

TEST(MostConfused, KeepsTheTopKAndCellsOfAtLeastTheMinimumCount) {
  expect_cells(most_confused(kThree, 2), {{0, 2, 7}, {2, 0, 7}});
  expect_cells(most_confused(kThree, 10, 3), {{0, 2, 7}, {2, 0, 7}, {1, 0, 3}});
  EXPECT_TRUE(most_confused(kThree, 0).empty());
  EXPECT_TRUE(most_confused(Matrix(), 10).empty());
}

TEST(MostConfused, PutsAnOverflowedCounterFirstAndLeavesNaNOut) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_cells(most_confused(matrix(2, {1, nan, inf, 1}), 10), {{1, 0, inf}});
}

TEST(OrderByConfusion, PlacesEachPairsTrueThenPredictedClassLargestPairFirst) {
  // Walk: (0,2) places 0 and 2; (2,0) adds nothing; (1,0) places 1.
  EXPECT_EQ(order_by_confusion(kThree), (std::vector<int32_t>{0, 2, 1}));
}

TEST(OrderByConfusion, PutsClassesWithNoConfusionLastByClassId) {
  Matrix m(5);
  m.at(0, 0) = 9;  // only correct predictions
  m.at(3, 1) = 5;
  m.at(2, 3) = 2;  // 3 is placed already: adds 2
  m.at(4, 4) = 1;
  EXPECT_EQ(order_by_confusion(m), (std::vector<int32_t>{3, 1, 2, 0, 4}));
}

TEST(OrderByConfusion, APredictedClassComesRightAfterItsTrueClassEvenWithALowerId) {
  Matrix m(4);
  m.at(3, 0) = 4;  // 3 first, then 0
  m.at(1, 2) = 4;  // tie with (3,0): true class 1 comes first
  EXPECT_EQ(order_by_confusion(m), (std::vector<int32_t>{1, 2, 3, 0}));
}

// Two ranks, three classes (cat, dog, fox):
//   rank 0          rank 1          synced (sum)    expected
//   4 1 0           3 0 0           7 1 0           7 1 0
//   0 3 0           1 4 0           1 7 0           1 6 0
//   0 2 5           0 2 4           0 4 9           0 2 8
// Row sums 8, 8, 13 against true counts 8, 7, 10: dog +1, fox +3.
Evaluation two_rank_evaluation(bool synced) {
  Evaluation e;
  e.meta.class_names = {"cat", "dog", "fox"};
  e.meta.class_counts = {8, 7, 10};
  e.per_rank = {matrix(3, {4, 1, 0, 0, 3, 0, 0, 2, 5}), matrix(3, {3, 0, 0, 1, 4, 0, 0, 2, 4})};
  const Matrix sum = matrix(3, {7, 1, 0, 1, 7, 0, 0, 4, 9});
  if (synced) e.synced = sum;
  e.expected = matrix(3, {7, 1, 0, 1, 6, 0, 0, 2, 8});
  e.row_check = check_rows(sum, e.meta.class_counts);
  return e;
}

TEST(RankConfusion, NamesEachPairsExpectedCountAndTheRanksThatCountedIt) {
  const ConfusionRanking r = rank_confusion(two_rank_evaluation(true), 10);
  expect_cells(r.pairs, {{2, 1, 4}, {0, 1, 1}, {1, 0, 1}});
  EXPECT_EQ(r.confused_cells, 3u);
  ASSERT_EQ(r.pairs.size(), 3u);
  EXPECT_EQ(r.pairs[0].expected, 2.0);
  EXPECT_EQ(r.pairs[0].ranks, (std::vector<RankCount>{{0, 2}, {1, 2}}));
  EXPECT_EQ(r.pairs[1].ranks, (std::vector<RankCount>{{0, 1}}));  // rank 1 counted none
  EXPECT_EQ(r.pairs[2].ranks, (std::vector<RankCount>{{1, 1}}));
}

TEST(RankConfusion, ListsWrongRowsWorstFirstWithEachRanksRowSum) {
  const ConfusionRanking r = rank_confusion(two_rank_evaluation(true), 10);
  EXPECT_EQ(r.wrong_total, 2u);
  ASSERT_EQ(r.wrong_rows.size(), 2u);
  EXPECT_EQ(r.wrong_rows[0].row, 2);
  EXPECT_EQ(r.wrong_rows[0].observed, 13);
  EXPECT_EQ(r.wrong_rows[0].truth, 10);
  EXPECT_EQ(r.wrong_rows[0].off, 3);
  EXPECT_EQ(r.wrong_rows[0].ranks, (std::vector<RankCount>{{0, 7}, {1, 6}}));
  EXPECT_EQ(r.wrong_rows[1].row, 1);
  EXPECT_EQ(r.wrong_rows[1].off, 1);
  EXPECT_EQ(r.wrong_rows[1].ranks, (std::vector<RankCount>{{0, 3}, {1, 5}}));
}

TEST(RankConfusion, ARunThatNeverSynchronizedIsRankedOnWhatItsRanksCounted) {
  const Evaluation e = two_rank_evaluation(false);
  EXPECT_EQ(ranked_matrix(e), matrix(3, {7, 1, 0, 1, 7, 0, 0, 4, 9}));
  expect_cells(rank_confusion(e, 1).pairs, {{2, 1, 4}});
  EXPECT_TRUE(rank_confusion(Evaluation{}, 10).pairs.empty());
}

TEST(RankConfusion, TextNamesClassesCountsRanksAndWhatIsLeftOut) {
  const Evaluation e = two_rank_evaluation(true);
  const std::string text = confusion_ranking_text(e, rank_confusion(e, 1));
  EXPECT_NE(text.find("Most confused pairs"), std::string::npos) << text;
  EXPECT_NE(text.find("fox -> dog"), std::string::npos) << text;
  EXPECT_NE(text.find("r0: 2, r1: 2"), std::string::npos) << text;
  EXPECT_NE(text.find("... 2 more confused cells"), std::string::npos) << text;
  EXPECT_NE(text.find("Wrong rows, worst first"), std::string::npos) << text;
  EXPECT_NE(text.find("!! fox"), std::string::npos) << text;
  EXPECT_NE(text.find("(+3)"), std::string::npos) << text;
  EXPECT_NE(text.find("r0: 7, r1: 6"), std::string::npos) << text;
  EXPECT_NE(text.find("... 1 more wrong rows"), std::string::npos) << text;
  EXPECT_EQ(text.find("cat -> dog"), std::string::npos) << "past the top 1:\n" << text;
}

TEST(RankConfusion, TextShowsEightRanksALine) {
  Evaluation e;
  e.meta.class_names = {"a", "b"};
  e.meta.class_counts = {10, 0};
  for (int k = 0; k < 10; ++k) e.per_rank.push_back(matrix(2, {0, 1, 0, 0}));
  e.synced = matrix(2, {0, 10, 0, 0});
  e.row_check = check_rows(*e.synced, e.meta.class_counts);
  const std::string text = confusion_ranking_text(e, rank_confusion(e, 10));
  EXPECT_NE(text.find("r7: 1, ... (2 more ranks)"), std::string::npos) << text;
  EXPECT_EQ(text.find("r8:"), std::string::npos) << text;
}

TEST(RankConfusion, JsonHoldsPairsAndRowsWithTheirRanks) {
  const nlohmann::json j = confusion_ranking_json(rank_confusion(two_rank_evaluation(true), 10));
  EXPECT_EQ(j["most_confused"][0], nlohmann::json::parse(R"({"true": 2, "predicted": 1,
      "count": 4, "expected": 2, "ranks": [{"rank": 0, "count": 2}, {"rank": 1, "count": 2}]})"));
  EXPECT_EQ(j["wrong_rows"][0], nlohmann::json::parse(R"({"class": 2, "observed": 13,
      "expected": 10, "difference": 3, "ranks": [{"rank": 0, "count": 7}, {"rank": 1, "count": 6}]})"));
  EXPECT_EQ(j["confused_cells"], 3);
  EXPECT_EQ(j["wrong_total"], 2);
}

// The report lists them past the printed matrix (more than 12 classes): padding duplicates
// at 15 classes make rows too large, each row's ranks summing to its row.
TEST(RankConfusion, TheReportOfManyClassesListsPairsAndWrongRowsWithTheirRanks) {
  Scenario s = load_preset("padding-duplicates");
  s.dataset = "synthetic:classes=15,per-class=51";  // 765 samples: 3 padded
  const Evaluation e = simulate(s);
  ASSERT_FALSE(e.row_check.wrong_rows.empty());
  const std::string text = report_text(e);
  EXPECT_NE(text.find("Most confused pairs"), std::string::npos) << text;
  EXPECT_NE(text.find("Wrong rows, worst first"), std::string::npos) << text;
  const nlohmann::json j = report_json(e)["confusion"];
  ASSERT_FALSE(j["wrong_rows"].empty());
  for (const nlohmann::json& row : j["wrong_rows"]) {
    double sum = 0;
    for (const nlohmann::json& r : row["ranks"]) sum += r["count"].get<double>();
    EXPECT_EQ(sum, row["observed"].get<double>());
    EXPECT_GT(row["difference"].get<double>(), 0);  // padding counts samples twice
  }
  // 765 samples on 4 ranks of 192: the order 0..764 dealt round-robin, then 0, 1, 2 again as
  // padding at positions 765..767, on ranks 1, 2 and 3. So sample i (i < 3) is counted on
  // rank i and again on rank i + 1: its class's row names both.
  const ConfusionRanking ranking = rank_confusion(e, 20, 1, Repeats::FromRecords);
  for (int64_t i = 0; i < 3; ++i) {
    const int32_t cls = e.inputs->target(i);
    const auto row = std::find_if(ranking.wrong_rows.begin(), ranking.wrong_rows.end(),
                                  [&](const WrongRow& w) { return w.row == cls; });
    ASSERT_NE(row, ranking.wrong_rows.end()) << "class " << cls;
    for (int32_t rank : {int32_t(i), int32_t(i + 1)})
      EXPECT_TRUE(std::any_of(row->repeated.begin(), row->repeated.end(),
                              [&](const RankCount& r) { return r.rank == rank; }))
          << "sample " << i << " on rank " << rank;
  }
  // The reports skip it: they read the same before and after the samples are released.
  for (const WrongRow& w : rank_confusion(e, 20).wrong_rows) EXPECT_TRUE(w.repeated.empty());
  EXPECT_EQ(report_text(simulate_preset("padding-duplicates")).find("Most confused pairs"),
            std::string::npos);
}

}  // namespace
}  // namespace shardlens

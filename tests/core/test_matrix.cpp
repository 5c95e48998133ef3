#include <gtest/gtest.h>

#include "core/vocabulary/matrix.h"
#include "core/vocabulary/types.h"

using namespace shardlens;

TEST(Matrix, NormalizeFollowsTorchmetrics) {
  Matrix m(2);
  m.cells = {3, 1, 0, 0};
  const Matrix t = normalize(m, Normalization::True);
  EXPECT_EQ(t.cells, (std::vector<double>{0.75, 0.25, 0, 0}));  // empty row: NaN -> 0
  const Matrix p = normalize(m, Normalization::Pred);
  EXPECT_EQ(p.cells, (std::vector<double>{1, 1, 0, 0}));
  const Matrix a = normalize(m, Normalization::All);
  EXPECT_EQ(a.cells, (std::vector<double>{0.75, 0.25, 0, 0}));
  EXPECT_EQ(normalize(m, Normalization::None), m);
}

TEST(Matrix, SumsAndScaling) {
  Matrix m(2);
  m.cells = {1, 2, 3, 4};
  EXPECT_EQ(m.row_sums(), (std::vector<double>{3, 7}));
  EXPECT_EQ(m.col_sums(), (std::vector<double>{4, 6}));
  EXPECT_EQ(m.total(), 10);
  EXPECT_EQ(m.diagonal_sum(), 5);  // 1 + 4
  EXPECT_EQ(m.scaled(2).cells, (std::vector<double>{2, 4, 6, 8}));
  EXPECT_THROW(parse_normalization("rows"), InputError);
}

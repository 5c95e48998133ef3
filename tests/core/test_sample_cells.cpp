// Samples that count many cells (core/vocabulary/sample_cells.h) through the one model a
// classification sample is the simplest case of: a sampler deals images, pads and trims
// images, and every matrix, sync and row check counts their pixels. Every expected value
// below is summed by hand from the five images' histograms in `five_images`.
#include <gtest/gtest.h>

#include "core/sim/engine.h"
#include "core/torchsem/sync.h"
#include "core/vocabulary/records.h"
#include "core/vocabulary/sample_cells.h"
#include "tests/core/cell_fixtures.h"

namespace shardlens {
namespace {

constexpr int32_t kClasses = 3;

// Five images of 3 classes, each a (true, predicted) pixel histogram:
//   0: (0,0) x 10, (1,1) x 5        3: (2,2) x 7
//   1: (1,1) x 4,  (1,2) x 2        4: (0,0) x 3, (2,0) x 1
//   2: (0,0) x 6
// Class counts (rows): class 0 = 10 + 6 + 3 = 19, class 1 = 5 + 6 = 11, class 2 = 7 + 1 = 8.
std::shared_ptr<const DatasetInputs> five_images() {
  return fixtures::cell_dataset(kClasses,
                                {{{0, 0, 10}, {1, 1, 5}},
                                 {{1, 1, 4}, {1, 2, 2}},
                                 {{0, 0, 6}},
                                 {{2, 2, 7}},
                                 {{0, 0, 3}, {2, 0, 1}}},
                                {19, 11, 8});
}

Scenario two_ranks(SyncStrategy sync) {
  Scenario s;
  s.sampler.kind = SamplerKind::Distributed;
  s.sampler.world_size = 2;
  s.sampler.shuffle = false;
  s.loader.batch_size = 1;
  s.sync = sync;
  return s;
}

TEST(SampleCells, DominantClassesAreTheLargestCountsLowerClassOnATie) {
  const auto in = five_images();
  EXPECT_EQ(in->cells->dominant(0), std::make_pair(0, 0));  // 10 pixels of class 0
  EXPECT_EQ(in->cells->dominant(1), std::make_pair(1, 1));  // predicted 1 x 4 over 2 x 2
  EXPECT_EQ(in->cells->dominant(4), std::make_pair(0, 0));
  EXPECT_EQ(in->cells->total(0), 15);
  CellTable empty;
  empty.classes = 3;
  empty.add_row({}, {});
  EXPECT_EQ(empty.dominant(0), std::make_pair(-1, -1));
}

// DistributedSampler, 5 images on 2 ranks: rank 0 gets 0, 2, 4; rank 1 gets 1, 3 and image 0
// again as padding. Image 0's 10 + 5 pixels are counted twice in the synced matrix.
TEST(SampleCells, PaddedDuplicateImageAddsAllItsPixelsAgain) {
  const Evaluation e = evaluate(two_ranks(SyncStrategy::AllReduce), five_images());
  EXPECT_EQ(e.meta.task, Task::Segmentation);
  ASSERT_EQ(e.per_rank.size(), 2u);
  // Rank 0: images 0, 2, 4.
  EXPECT_EQ(e.per_rank[0].at(0, 0), 10 + 6 + 3);
  EXPECT_EQ(e.per_rank[0].at(1, 1), 5);
  EXPECT_EQ(e.per_rank[0].at(2, 0), 1);
  EXPECT_EQ(e.per_rank[0].total(), 25);
  // Rank 1: images 1, 3, 0.
  EXPECT_EQ(e.per_rank[1].at(1, 1), 4 + 5);
  EXPECT_EQ(e.per_rank[1].at(1, 2), 2);
  EXPECT_EQ(e.per_rank[1].at(2, 2), 7);
  EXPECT_EQ(e.per_rank[1].at(0, 0), 10);
  EXPECT_EQ(e.per_rank[1].total(), 28);
  ASSERT_TRUE(e.synced && e.expected);
  EXPECT_EQ(e.synced->total(), 53);
  EXPECT_EQ(e.expected->total(), 38);
  EXPECT_EQ(e.expected->at(0, 0), 19);
  // Rows 0 and 1 carry image 0's pixels twice; row 2 is right.
  EXPECT_EQ(e.row_check.off, (std::vector<double>{10, 5, 0}));
  EXPECT_EQ(e.row_check.wrong_rows, (std::vector<int32_t>{0, 1}));
  // Samples stay samples: image 0 was evaluated twice, the others once.
  EXPECT_EQ(e.times_evaluated[0], 2);
  EXPECT_EQ(e.times_evaluated[3], 1);
}

// gather_for_metrics with batches of 1: the last step gathers 2 images and keeps the
// dataset's remainder, 5 % 2 = 1, so the padded image 0 of rank 1 is cut and every row is right.
TEST(SampleCells, GatherForMetricsCutsThePaddedImage) {
  const Evaluation e = evaluate(two_ranks(SyncStrategy::GatherForMetrics), five_images());
  ASSERT_TRUE(e.synced);
  EXPECT_EQ(e.synced->total(), 38);
  EXPECT_TRUE(e.row_check.wrong_rows.empty());
}

// A float16 counter rounds each batch's pixel counts into the state; small counts are exact.
TEST(SampleCells, FloatCounterCountsTheSamePixelsWhenExact) {
  Scenario s = two_ranks(SyncStrategy::AllReduce);
  s.dtype = CounterDtype::Float16;
  const Evaluation e = evaluate(s, five_images());
  EXPECT_EQ(e.per_rank[0].total(), 25);
  EXPECT_EQ(e.per_rank[1].total(), 28);
}

// The record of an image shows its dominant classes and names its row of the table; counting
// the records adds the row, leaving out an ignored class.
TEST(SampleCells, RecordsCountTheirRowsAndLeaveTheIgnoredClassOut) {
  const auto in = five_images();
  StoredRecords stored;
  stored.cells = in->cells;
  stored.ranks = {{Record{0, 0, 0, 0, 0}, Record{4, 0, 0, 0, 4}}};
  Matrix m(kClasses);
  count_records(m, stored, 0);
  EXPECT_EQ(m.total(), 15 + 4);
  Matrix without_class_2(kClasses);
  count_records(without_class_2, stored, 0, /*ignore_index=*/2);
  EXPECT_EQ(without_class_2.total(), 15 + 3);  // image 4's (2, 0) pixel is ignored
}

TEST(SampleCells, MultilabelClassesAreTwoPerLabel) {
  EXPECT_EQ(multilabel_class(0, false), 0);
  EXPECT_EQ(multilabel_class(3, true), 7);
  EXPECT_EQ(multilabel_class_names({"cat", "dog"}),
            (std::vector<std::string>{"cat absent", "cat present", "dog absent", "dog present"}));
  EXPECT_EQ(task_from_string("tokens"), Task::Tokens);
  EXPECT_FALSE(task_from_string("detection"));
  EXPECT_EQ(count_unit(Task::Segmentation), "pixels");
  EXPECT_EQ(count_unit_one(Task::Multilabel), "label decision");
}

}  // namespace
}  // namespace shardlens

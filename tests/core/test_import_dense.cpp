// Imports of dumps whose samples count many cells (segmentation, tokens, multilabel: dump
// format 3, docs/FORMATS.md), their run files, and the refusal of malformed ones. The matrices
// expected here are the cells of the fixtures added up by hand.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "core/dataset/dense_synthetic.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/sha256.h"
#include "core/runfile/import.h"
#include "core/runfile/run_evaluation.h"
#include "core/vocabulary/types.h"

namespace fs = std::filesystem;
using namespace shardlens;

namespace {

using Members = std::vector<std::pair<std::string, std::string>>;

std::string ints(const std::vector<int64_t>& v) {
  return npy_bytes(v, {int64_t(v.size())});
}
std::string scalar(int64_t v) {
  return npy_bytes(std::vector<int64_t>{v}, {});
}
std::string settings_bytes(const nlohmann::json& j) {
  const std::string text = j.dump();
  return npy_bytes(std::vector<uint8_t>(text.begin(), text.end()), {int64_t(text.size())});
}

// One rank's dump of samples of cells, in the arrays of the dump format.
struct DenseDump {
  int64_t rank = 0;
  std::vector<int64_t> index, flags;
  std::vector<int64_t> per, target, prediction, count, size, ignored;
  nlohmann::json settings = {{"task", "segmentation"}, {"num_classes", 3}, {"ignore_index", 255}};

  Members members() const {
    const std::vector<int64_t> zeros(index.size(), 0);  // recomputed from the cells
    Members m = {{"index.npy", ints(index)},
                 {"target.npy", ints(zeros)},
                 {"prediction.npy", ints(zeros)},
                 {"rank.npy", scalar(rank)},
                 {"world_size.npy", scalar(2)},
                 {"format_version.npy", scalar(3)},
                 {"cells_per_record.npy", ints(per)},
                 {"cell_target.npy", ints(target)},
                 {"cell_prediction.npy", ints(prediction)},
                 {"cell_count.npy", ints(count)},
                 {"sample_size.npy", ints(size)},
                 {"ignored.npy", ints(ignored)},
                 {"settings_json.npy", settings_bytes(settings)}};
    if (!flags.empty())
      m.push_back({"flags.npy", npy_bytes(std::vector<uint8_t>(flags.begin(), flags.end()),
                                          {int64_t(flags.size())})});
    return m;
  }
};

// Three images of 3 classes, ignore_index 255 (each cell a (true, predicted) pixel count):
//   image 0: (0,0) 5, (1,0) 2, (1,1) 3 and 2 ignored: 12 pixels
//   image 1: (2,2) 4, (0,2) 1: 5 pixels
//   image 2: ignored pixels only: 4
// Rank 0 evaluates images 0 and 2; rank 1 image 1 and image 0 again (DistributedSampler's
// padding duplicate).
DenseDump rank0() {
  DenseDump d;
  d.rank = 0;
  d.index = {0, 2};
  d.per = {3, 0};
  d.target = {0, 1, 1};
  d.prediction = {0, 0, 1};
  d.count = {5, 2, 3};
  d.size = {12, 4};
  d.ignored = {2, 4};
  return d;
}
DenseDump rank1() {
  DenseDump d;
  d.rank = 1;
  d.index = {1, 0};
  d.flags = {0, 1};
  d.per = {2, 3};
  d.target = {2, 0, 0, 1, 1};
  d.prediction = {2, 2, 0, 0, 1};
  d.count = {4, 1, 5, 2, 3};
  d.size = {5, 12};
  d.ignored = {0, 2};
  return d;
}

Matrix matrix(int32_t c, const std::vector<double>& cells) {
  Matrix m(c);
  m.cells = cells;
  return m;
}

class ImportDense : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    m_dir = fs::temp_directory_path() /
            ("shardlens_import_dense_" + std::to_string(::getpid()) + "_" + name);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::string path(const std::string& name) const { return (m_dir / name).string(); }
  std::string write(const std::string& name, const Members& members) const {
    write_npz(path(name), members);
    return path(name);
  }
  std::string write_text(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
  // The two ranks' dumps, rank 0's changed by `edit`.
  std::vector<std::string> dumps(const std::function<void(DenseDump&)>& edit = {}) const {
    DenseDump a = rank0();
    if (edit) edit(a);
    return {write("seg_rank0.npz", a.members()), write("seg_rank1.npz", rank1().members())};
  }
  // The InputError an import of `paths` throws ("" when it imports).
  static std::string error_of(const std::vector<std::string>& paths,
                              const ImportOptions& options = {}) {
    try {
      import_dumps(paths, options);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  // The refusal names the file, and says `needle` (the record and the value).
  void expect_refused(const std::function<void(DenseDump&)>& edit, const std::string& needle) {
    const std::vector<std::string> paths = dumps(edit);
    const std::string what = error_of(paths);
    EXPECT_NE(what.find(paths[0]), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << "wanted: " << needle << "\ngot: " << what;
  }

  fs::path m_dir;
};

}  // namespace

TEST_F(ImportDense, SegmentationDumpsCountEveryPixelOfEverySample) {
  const RunFile run = import_dumps(dumps(), {});
  EXPECT_EQ(run.meta.task, Task::Segmentation);
  EXPECT_EQ(run.meta.classes, 3);
  EXPECT_EQ(run.meta.ignore_index, 255);  // the recorded one
  ASSERT_NE(run.records.cell_table(), nullptr);
  EXPECT_EQ(run.per_rank[0], matrix(3, {5, 0, 0, 2, 3, 0, 0, 0, 0}));
  // The padding duplicate adds all of image 0's pixels again.
  EXPECT_EQ(run.per_rank[1], matrix(3, {5, 0, 1, 2, 3, 0, 0, 0, 4}));
  EXPECT_EQ(run.synced.total(), 10 + 10 + 5);
  // True pixels of the distinct images: class 0 5 + 1, class 1 5, class 2 4.
  EXPECT_EQ(run.meta.class_counts, (std::vector<int64_t>{6, 5, 4}));
  EXPECT_EQ(run.meta.class_counts_source, "distinct-records");
  // Records stay one per image, showing its largest true and predicted class (lower on a tie;
  // 0 for an image of ignored pixels only).
  ASSERT_EQ(run.records.ranks[0].size(), 2u);
  EXPECT_EQ(run.records.ranks[0][0].target, 0);
  EXPECT_EQ(run.records.ranks[0][0].prediction, 0);
  EXPECT_EQ(run.records.ranks[1][0].target, 2);
  EXPECT_EQ(run.records.ranks[1][0].prediction, 2);
  EXPECT_EQ(run.records.ranks[1][1].flags, kPadding);
  EXPECT_EQ(dump_kind_text(run),
            "segmentation dump: 3 images (4 records), 3 classes, 25 pixels counted");
  // Duplicates are of images: one image evaluated twice.
  const Evaluation e = evaluation_from_run(run, "run");
  EXPECT_EQ(e.diagnosis.duplicated_samples, 1);
  EXPECT_FALSE(e.diagnosis.correct);
  EXPECT_EQ(*e.expected, matrix(3, {5, 0, 1, 2, 3, 0, 0, 0, 4}));
}

TEST_F(ImportDense, RunFilesKeepEachRecordsCells) {
  const RunFile run = import_dumps(dumps(), {});
  save_run_file(run, path("seg.slrun"));
  const RunFile back = load_run_file(path("seg.slrun"));
  EXPECT_EQ(back.meta.task, Task::Segmentation);
  EXPECT_EQ(back.meta.format_version, kRunFormatVersionCells);
  EXPECT_EQ(back.per_rank, run.per_rank);
  EXPECT_EQ(back.meta.class_counts, run.meta.class_counts);
  ASSERT_NE(back.records.cell_table(), nullptr);
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(back.records.ranks[r].size(), run.records.ranks[r].size());
    for (size_t i = 0; i < run.records.ranks[r].size(); ++i) {
      const Record& a = run.records.ranks[r][i];
      const Record& b = back.records.ranks[r][i];
      EXPECT_EQ(a.target, b.target);
      EXPECT_EQ(back.records.cells->total(b.cells), run.records.cells->total(a.cells));
    }
  }
  // The evaluation made from a loaded run saves again with its cells.
  const RunFile again = run_from_evaluation(evaluation_from_run(back, "seg.slrun"));
  save_run_file(again, path("again.slrun"));
  EXPECT_EQ(load_run_file(path("again.slrun")).per_rank, run.per_rank);
}

TEST_F(ImportDense, MultilabelCellsAreTwoByTwoBlocksOfTwoClassesALabel) {
  // Two labels, torchmetrics MultilabelConfusionMatrix [l, t, p] = cell (2l + t, 2l + p):
  // item 0: label 0 true and predicted, label 1 absent but predicted; item 1: label 0 absent
  // and not predicted, label 1's target is the ignore_index.
  DenseDump d;
  d.index = {0, 1};
  d.per = {2, 1};
  d.target = {1, 2, 0};
  d.prediction = {1, 3, 0};
  d.count = {1, 1, 1};
  d.size = {2, 2};
  d.ignored = {0, 1};
  d.settings = {{"task", "multilabel"}, {"num_labels", 2}, {"ignore_index", -1}};
  Members m = d.members();
  m.erase(std::find_if(m.begin(), m.end(), [](auto& p) { return p.first == "world_size.npy"; }));
  const RunFile run = import_dumps({write("ml_rank0.npz", m)}, {});
  EXPECT_EQ(run.meta.task, Task::Multilabel);
  EXPECT_EQ(run.meta.classes, 4);
  Matrix want(4);
  want.at(1, 1) = 1;
  want.at(2, 3) = 1;
  want.at(0, 0) = 1;
  EXPECT_EQ(run.per_rank[0], want);
  EXPECT_EQ(dump_kind_text(run), "multilabel dump: 2 items, 4 classes, 3 label decisions counted");
  EXPECT_EQ(run.meta.class_names,
            (std::vector<std::string>{"0 absent", "0 present", "1 absent", "1 present"}));
}

TEST_F(ImportDense, CsvCountColumnGroupsRowsByRecordOrConsecutiveIndex) {
  // Token counts: two sequences on rank 0 (record column), one on rank 1 (consecutive rows).
  const std::string a = write_text("tok_rank0.csv",
                                   "rank,index,record,target,prediction,count\n"
                                   "0,4,0,0,0,7\n"
                                   "0,6,1,1,2,2\n"
                                   "0,4,0,2,2,1\n"
                                   "0,6,1,1,1,3\n");
  const std::string b = write_text("tok_rank1.csv",
                                   "rank,index,target,prediction,count\n"
                                   "1,5,0,1,2\n"
                                   "1,5,0,0,4\n");
  ImportOptions options;
  options.task = Task::Tokens;
  const RunFile run = import_dumps({a, b}, options);
  EXPECT_EQ(run.meta.task, Task::Tokens);
  ASSERT_EQ(run.records.ranks[0].size(), 2u);
  ASSERT_EQ(run.records.ranks[1].size(), 1u);
  EXPECT_EQ(run.records.ranks[0][0].index, 4);
  EXPECT_EQ(run.records.ranks[0][1].index, 6);
  EXPECT_EQ(run.records.ranks[0][1].target, 1);
  EXPECT_EQ(run.records.ranks[0][1].prediction, 1);
  EXPECT_EQ(run.per_rank[0], matrix(3, {7, 0, 0, 0, 3, 2, 0, 0, 1}));
  EXPECT_EQ(run.per_rank[1], matrix(3, {4, 2, 0, 0, 0, 0, 0, 0, 0}));
  // Without --task a CSV of cells is segmentation.
  EXPECT_EQ(import_dumps({a, b}, {}).meta.task, Task::Segmentation);
}

TEST_F(ImportDense, CellArraysOfAnotherShapeAreRefused) {
  expect_refused(
      [](DenseDump& d) {
        d.per = {3, 0, 0};
      },
      "'cells_per_record' has 3 entries for 2 records");
  expect_refused(
      [](DenseDump& d) {
        d.prediction = {0, 0};
      },
      "the cell arrays have different lengths (cell_target 3, cell_prediction 2, cell_count 3)");
  expect_refused(
      [](DenseDump& d) {
        d.per = {2, 0};
      },
      "'cells_per_record' adds up to 2 cells, but the cell arrays hold 3");
  expect_refused([](DenseDump& d) { d.per = {4, -1}; }, "adds up to more than the 3 cells");
  expect_refused(
      [](DenseDump& d) {
        d.per = {-1, 4};
      },
      "record 0 of rank 0 (dataset index 0) (array 'cells_per_record'): cells_per_record -1 is "
      "negative");
}

TEST_F(ImportDense, ClassIdsPastTheClassesAreRefusedUnlessTheIgnoreIndex) {
  expect_refused(
      [](DenseDump& d) {
        d.target = {0, 7, 1};
      },
      "record 0 of rank 0 (dataset index 0) (array 'cell_target'): cell 1 has target 7, "
      "outside [0, 3) and not the ignore_index 255");
  expect_refused(
      [](DenseDump& d) {
        d.prediction = {0, 0, 3};
      },
      "record 0 of rank 0 (dataset index 0) (array 'cell_prediction'): cell 2 has "
      "prediction 3, outside [0, 3)");
  // A cell of ignored pixels is not counted (as torchmetrics leaves them out).
  DenseDump a = rank0();
  a.target = {0, 255, 1};
  const RunFile run = import_dumps(
      {write("seg_rank0.npz", a.members()), write("seg_rank1.npz", rank1().members())}, {});
  EXPECT_EQ(run.per_rank[0], matrix(3, {5, 0, 0, 0, 3, 0, 0, 0, 0}));
}

TEST_F(ImportDense, FloatCellArraysAreRefused) {
  DenseDump a = rank0();
  Members m = a.members();
  for (auto& [name, bytes] : m)
    if (name == "cell_target.npy") bytes = npy_bytes(std::vector<double>{0, 1, 1}, {3});
  const std::string p = write("seg_rank0.npz", m);
  const std::string what = error_of({p, write("seg_rank1.npz", rank1().members())});
  EXPECT_NE(what.find(p + ": array 'cell_target' is a float array"), std::string::npos) << what;
}

TEST_F(ImportDense, AHistogramThatIsNotTheSamplesSizeIsRefused) {
  expect_refused(
      [](DenseDump& d) {
        d.size = {13, 4};
      },
      "record 0 of rank 0 (dataset index 0): its cells add up to 10 pixels and 2 "
      "ignored, but sample_size says 13");
  expect_refused(
      [](DenseDump& d) {
        d.ignored = {2, 5};
      },
      "record 1 of rank 0 (dataset index 2) (array 'ignored'): ignored 5 is more than "
      "its sample_size 4");
  expect_refused(
      [](DenseDump& d) {
        d.size = {int64_t(1) << 54, 4};
      },
      "sample_size 18014398509481984 is outside [0, 2^53]");
}

TEST_F(ImportDense, CountsThatAreNotPositiveOrTooLargeAreRefused) {
  expect_refused(
      [](DenseDump& d) {
        d.count = {5, 0, 3};
      },
      "record 0 of rank 0 (dataset index 0) (array 'cell_count'): cell 1: count 0 is "
      "not positive");
  expect_refused([](DenseDump& d) { d.count = {5, -2, 3}; }, "count -2 is not positive");
  expect_refused(
      [](DenseDump& d) {
        d.count = {5, int64_t(1) << 32, 3};
      },
      "count 4294967296 is more than one sample's cell holds (2^32 - 1)");
}

TEST_F(ImportDense, ACellGivenTwiceInOneSampleIsRefused) {
  expect_refused(
      [](DenseDump& d) {
        d.target = {0, 1, 0};
        d.prediction = {0, 0, 0};
      },
      "record 0 of rank 0 (dataset index 0): the cell (0, 0) is given twice, as its cells 0 and 2");
}

TEST_F(ImportDense, TasksAndLabelsThatDisagreeAreRefused) {
  expect_refused([](DenseDump& d) { d.settings["task"] = "detection"; },
                 "settings_json: task 'detection' is none of classification, segmentation, "
                 "tokens, multilabel");
  expect_refused([](DenseDump& d) { d.settings["task"] = "classification"; },
                 "settings_json says task 'classification' but the dump holds cell arrays");
  // One rank alone, so that its settings are not compared with another's first.
  auto alone = [&](const std::string& name, const DenseDump& d) {
    Members m = d.members();
    std::erase_if(m, [](auto& p) { return p.first == "world_size.npy"; });
    return write(name, m);
  };
  DenseDump seg = rank0();
  seg.settings["num_labels"] = 2;
  const std::string s = alone("seg_rank0.npz", seg);
  EXPECT_NE(error_of({s}).find(s + ": settings_json: 'num_labels' = 2 belongs to a multilabel "
                                   "evaluation, but the task is segmentation"),
            std::string::npos)
      << error_of({s});
  DenseDump ml = rank0();
  ml.settings = {{"task", "multilabel"}, {"num_labels", 3}, {"num_classes", 4}};
  const std::string p = alone("ml_rank0.npz", ml);
  const std::string what = error_of({p});
  EXPECT_NE(what.find(p + ": settings_json: num_classes 4 is not 2 x num_labels (3)"),
            std::string::npos)
      << what;
  // A multilabel cell within one label, counting one decision.
  ml.settings = {{"task", "multilabel"}, {"num_labels", 2}};
  ml.target = {0, 1, 1};
  ml.prediction = {0, 2, 1};
  ml.count = {1, 1, 1};
  ml.size = {3, 0};
  ml.ignored = {0, 0};
  const std::string q = alone("ml2_rank0.npz", ml);
  EXPECT_NE(error_of({q}).find("cell 1 (1, 2) mixes label 0 and label 1"), std::string::npos)
      << error_of({q});
}

TEST_F(ImportDense, ATaskOfCellsWithoutCellsIsRefused) {
  Members m = rank0().members();
  std::erase_if(m, [](auto& p) { return p.first.starts_with("cell"); });
  const std::string p = write("seg_rank0.npz", m);
  const std::string what = error_of({p, write("seg_rank1.npz", rank1().members())});
  EXPECT_NE(what.find(p + ": task 'segmentation' needs the arrays cells_per_record, cell_target, "
                          "cell_prediction and cell_count (missing: cells_per_record, "
                          "cell_target, cell_prediction, cell_count)"),
            std::string::npos)
      << what;
}

TEST_F(ImportDense, RunFilesWhoseCellsLieAreRefused) {
  const RunFile run = import_dumps(dumps(), {});
  auto members = run_file_members(run);
  std::map<std::string, std::string> byname(members.begin(), members.end());
  // Each edit, with meta.json's checksums refreshed so the cells' own check is reached.
  auto refused = [&](const std::function<void(std::map<std::string, std::string>&)>& edit,
                     const std::string& needle) {
    auto m = byname;
    edit(m);
    auto meta = nlohmann::json::parse(m["meta.json"]);
    nlohmann::json sums = nlohmann::json::object();
    for (const auto& [name, data] : m)
      if (name != "meta.json") sums[name] = {{"sha256", sha256_hex(data)}, {"bytes", data.size()}};
    meta["members"] = sums;
    m["meta.json"] = meta.dump();
    write_npz(path("bad.slrun"), Members(m.begin(), m.end()));
    try {
      load_run_file(path("bad.slrun"));
      ADD_FAILURE() << "accepted; wanted: " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path("bad.slrun") + ": "), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused(
      [](auto& m) {
        m["rank0_cells_per_record.npy"] = ints({3, 1});
      },
      "member rank0_cells_per_record.npy gives record 1 1 cells, of the 0 left");
  refused(
      [](auto& m) {
        m["rank0_cells_per_record.npy"] = ints({2, 0});
      },
      "member rank0_cells_per_record.npy adds up to 2 cells, but rank0_cell_key.npy holds 3");
  refused(
      [](auto& m) {
        m["rank0_cell_count.npy"] = ints({5, 0, 3});
      },
      "record 0 of rank 0 (member rank0_cell_count.npy): count 0 is outside [1, 2^32 - 1]");
  refused(
      [](auto& m) {
        m["rank0_cell_key.npy"] = npy_bytes(std::vector<int32_t>{0, 9, 4}, {3});
      },
      "record 0 of rank 0 (member rank0_cell_key.npy): key 9 is outside [0, 9)");
  refused(
      [](auto& m) {
        m["rank0_cell_key.npy"] = npy_bytes(std::vector<int32_t>{0, 0, 4}, {3});
      },
      "key 0 is given twice in one record");
  refused([](auto& m) { m.erase("rank1_cell_key.npy"); },
          "member rank1_cell_key.npy is missing (a segmentation run's records carry their cells)");
  // A rank matrix that its records' cells do not add up to.
  refused(
      [](auto& m) {
        m["rank0_cell_count.npy"] = ints({5, 2, 4});
      },
      "member rank0_matrix.npy holds 3 at row 1, column 1, but rank 0's records hold 4 pixels");
  refused(
      [](auto& m) {
        auto meta = nlohmann::json::parse(m["meta.json"]);
        meta["format_version"] = 4;
        m["meta.json"] = meta.dump();
      },
      "meta.json: task 'segmentation' in a file of format version 4");
}

TEST_F(ImportDense, ADenseDatasetGivesTheTruePixelsAndChecksEachSample) {
  const std::string spec = "seg:n=5,classes=4,size=8x8,seed=3";
  const DenseTruth truth = load_dense_truth(spec);
  // Each image predicted perfectly; rank 1 pads with image 0 again (5 images on 2 ranks).
  auto rank_dump = [&](int64_t rank, const std::vector<int64_t>& indices) {
    DenseDump d;
    d.rank = rank;
    d.index = indices;
    d.settings = {{"task", "segmentation"}, {"ignore_index", truth.ignore_index}};
    for (int64_t i : indices) {
      const auto keys = truth.truth.keys_of(i);
      const auto counts = truth.truth.counts_of(i);
      d.per.push_back(int64_t(keys.size()));
      for (size_t k = 0; k < keys.size(); ++k) {
        d.target.push_back(keys[k] / uint32_t(truth.classes()));
        d.prediction.push_back(keys[k] % uint32_t(truth.classes()));
        d.count.push_back(counts[k]);
      }
      d.size.push_back(truth.sample_size[size_t(i)]);
      d.ignored.push_back(truth.ignored[size_t(i)]);
    }
    return d;
  };
  ImportOptions options;
  options.dataset = spec;
  const DenseDump a = rank_dump(0, {0, 2, 4}), b = rank_dump(1, {1, 3, 0});
  const RunFile run = import_dumps(
      {write("seg_rank0.npz", a.members()), write("seg_rank1.npz", b.members())}, options);
  // The true pixels of each class: every image's truth added up.
  std::vector<int64_t> want(size_t(truth.classes()), 0);
  for (size_t k = 0; k < truth.truth.keys.size(); ++k)
    want[truth.truth.keys[k] / uint32_t(truth.classes())] += truth.truth.counts[k];
  EXPECT_EQ(run.meta.class_counts, want);
  EXPECT_EQ(run.meta.class_counts_source, "dataset");
  EXPECT_EQ(run.meta.dataset_size, 5);
  // A dump whose image holds another count of a class than the dataset's is refused.
  DenseDump wrong = a;
  wrong.count[0] += 1;
  wrong.size[0] += 1;
  const std::string p = write("seg_rank0.npz", wrong.members());
  const std::string what = error_of({p, write("seg_rank1.npz", b.members())}, options);
  EXPECT_NE(what.find(p + ": record 0 of rank 0 (dataset index 0): its cells hold " +
                      std::to_string(wrong.count[0]) + " pixels of class " +
                      std::to_string(wrong.target[0]) + ", but " + spec + " says"),
            std::string::npos)
      << what;
}

TEST_F(ImportDense, RowsPadAcrossProcessesAddedLeaveTheirCellsOut) {
  // Rank 0's third row is accelerator.pad_across_processes' (flag PAD_ROW = 4): not a sample,
  // so its cells count nowhere.
  DenseDump a = rank0();
  a.index = {0, 2, 2};
  a.flags = {0, 0, 4};
  a.per = {3, 0, 1};
  a.target = {0, 1, 1, 2};
  a.prediction = {0, 0, 1, 2};
  a.count = {5, 2, 3, 9};
  a.size = {12, 4, 9};
  a.ignored = {2, 4, 0};
  const RunFile run = import_dumps(
      {write("seg_rank0.npz", a.members()), write("seg_rank1.npz", rank1().members())}, {});
  ASSERT_EQ(run.records.ranks[0].size(), 2u);
  EXPECT_EQ(run.per_rank[0], matrix(3, {5, 0, 0, 2, 3, 0, 0, 0, 0}));
}

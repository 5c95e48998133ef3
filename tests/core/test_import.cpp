// Imports of per-rank dumps (.npz, .npy, .csv) and their rejection of malformed input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include <unistd.h>

#include "core/dataset/labels.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/report/metrics.h"
#include "core/report/report.h"
#include "core/runfile/import.h"
#include "core/runfile/run_evaluation.h"
#include "core/sim/specs.h"
#include "core/vocabulary/types.h"
#include "tests/common/test_rows.h"

namespace fs = std::filesystem;
using namespace shardlens;

namespace {

class ImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A row of a table test is named "Test/Row": one directory, not a nested one.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    m_dir =
        fs::temp_directory_path() / ("shardlens_import_" + std::to_string(::getpid()) + "_" + name);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::string path(const std::string& name) const { return (m_dir / name).string(); }
  std::string write_text(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
  std::string write_npz_dump(
      const std::string& name,
      const std::vector<std::pair<std::string, std::string>>& members) const {
    write_npz(path(name), members);
    return path(name);
  }

  fs::path m_dir;
};

std::string ints(const std::vector<int64_t>& v) {
  return npy_bytes(v, {int64_t(v.size())});
}

// A two-rank evaluation of 6 samples, 3 classes; rank 1's last record pads with index 0.
const std::vector<std::vector<int64_t>> kRows = {
    // rank, index, target, prediction
    {0, 0, 0, 0}, {0, 2, 1, 1}, {0, 4, 2, 0}, {1, 1, 0, 0},
    {1, 3, 1, 2}, {1, 5, 2, 2}, {1, 0, 0, 0}};

std::vector<std::pair<std::string, std::string>> rank_members(int rank,
                                                              bool with_rank_array = true) {
  std::vector<int64_t> index, target, pred;
  for (const auto& row : kRows) {
    if (row[0] != rank) continue;
    index.push_back(row[1]);
    target.push_back(row[2]);
    pred.push_back(row[3]);
  }
  std::vector<std::pair<std::string, std::string>> m = {
      {"index.npy", ints(index)},
      {"target.npy", ints(target)},
      {"prediction.npy", ints(pred)},
      {"world_size.npy", npy_bytes(std::vector<int64_t>{2}, {})}};
  if (with_rank_array) m.push_back({"rank.npy", npy_bytes(std::vector<int64_t>{rank}, {})});
  return m;
}

void expect_error(const std::function<void()>& f, const std::string& file,
                  const std::string& needle) {
  try {
    f();
    FAIL() << "no error; expected one mentioning " << needle;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

}  // namespace

TEST_F(ImportTest, NpzPerRankDumps) {
  const auto a = write_npz_dump("a.npz", rank_members(0));
  const auto b = write_npz_dump("b.npz", rank_members(1));
  const RunFile run = import_dumps({a, b}, {});
  EXPECT_EQ(run.meta.world_size, 2);
  EXPECT_EQ(run.meta.classes, 3);
  EXPECT_EQ(run.meta.source, "imported");
  ASSERT_EQ(run.records.ranks[0].size(), 3u);
  ASSERT_EQ(run.records.ranks[1].size(), 4u);
  EXPECT_EQ(run.records.ranks[1][1].index, 3);
  EXPECT_EQ(run.records.ranks[1][1].prediction, 2);
  EXPECT_EQ(run.per_rank[0].at(2, 0), 1);
  EXPECT_EQ(run.per_rank[1].at(0, 0), 2);
  EXPECT_EQ(run.synced.total(), 7);
  // No dataset: class counts estimated from the 6 distinct samples.
  EXPECT_EQ(run.meta.class_counts_source, "distinct-records");
  EXPECT_EQ(run.meta.class_counts, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(run.meta.dataset_size, 6);
  // The run saves and loads back, and diagnoses the duplicate.
  save_run_file(run, path("out.slrun"));
  const RunFile back = load_run_file(path("out.slrun"));
  EXPECT_EQ(back.synced, run.synced);
  const Diagnosis d = evaluation_from_run(back, "run").diagnosis;
  EXPECT_FALSE(d.correct);
  EXPECT_EQ(d.duplicated_samples, 1);
}

TEST_F(ImportTest, ReportedMatrixAndRankFromFileName) {
  auto m0 = rank_members(0, false);
  auto m1 = rank_members(1, false);
  std::vector<int64_t> reported(9, 0);
  reported[0] = 42;  // whatever the run reported, e.g. after a double sync
  m0.push_back({"reported.npy", npy_bytes(reported, {3, 3})});
  const RunFile run = import_dumps(
      {write_npz_dump("eval_rank0.npz", m0), write_npz_dump("eval_rank1.npz", m1)}, {});
  EXPECT_EQ(run.synced.at(0, 0), 42);
  EXPECT_EQ(run.synced.total(), 42);
  EXPECT_EQ(run.per_rank[1].total(), 4);
}

TEST_F(ImportTest, ScoresAreReducedByArgmax) {
  auto m = rank_members(0);
  m[2] = {"prediction.npy",
          npy_bytes(std::vector<double>{0.9, 0.1, 0, 0.2, 0.7, 0.1, 0.5, 0.5, 0}, {3, 3})};
  m.erase(m.begin() + 3);  // world_size: the only rank
  const RunFile run = import_dumps({write_npz_dump("r.npz", m)}, {});
  EXPECT_EQ(run.records.ranks[0][0].prediction, 0);
  EXPECT_EQ(run.records.ranks[0][1].prediction, 1);
  EXPECT_EQ(run.records.ranks[0][2].prediction, 0);  // tie: first maximum, as torch.argmax
}

// Scores holding NaN are reduced as the frameworks reduce them: torch (Debian's 1.13) and
// numpy compute the expected predictions from the very scores the dump holds.
TEST_F(ImportTest, ScoresWithNaNAreReducedAsTorchArgmaxDoes) {
  const int rc = std::system(("cd '" + path("") +
                              "' && /usr/bin/python3 - <<'PY'\n"
                              "import numpy as np, torch\n"
                              "nan = float('nan')\n"
                              "scores = np.array([[0.1, nan, 0.5], [nan, nan, 1.0],\n"
                              "                   [0.2, 0.9, nan], [0.3, 0.3, 0.1],\n"
                              "                   [-np.inf, nan, np.inf], [0.0, 1.0, 0.5]])\n"
                              "torch_pred = torch.from_numpy(scores).argmax(dim=1).numpy()\n"
                              "assert (torch_pred == np.argmax(scores, axis=1)).all()\n"
                              "np.save('expected.npy', torch_pred.astype(np.int64))\n"
                              "np.savez('nan_scores_rank0.npz', index=np.arange(6),\n"
                              "         target=np.zeros(6, np.int64), prediction=scores)\n"
                              "PY")
                                 .c_str());
  if (WEXITSTATUS(rc) != 0 && std::getenv("CI") == nullptr)
    GTEST_SKIP() << "/usr/bin/python3 lacks torch or numpy (python3-torch)";
  ASSERT_EQ(WEXITSTATUS(rc), 0);
  const std::vector<int64_t> expected = read_npy_integers(path("expected.npy"));
  ASSERT_EQ(expected, (std::vector<int64_t>{1, 0, 2, 0, 1, 1}));  // the oracle saw the NaNs
  const RunFile run = import_dumps({path("nan_scores_rank0.npz")}, {});
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(run.records.ranks[0][i].prediction, expected[i]) << "row " << i;
}

// A CSV holding two names of one field is refused, as an .npz holding two such arrays is:
// taking either silently may take the wrong one.
TEST_F(ImportTest, CsvWithTwoColumnsForOneFieldIsRefused) {
  const std::string both =
      write_text("both.csv", "rank,index,label,target,prediction\n0,0,1,0,0\n0,1,1,1,1\n");
  expect_error([&] { import_dumps({both}, {}); }, "both.csv",
               "both column 'target' and column 'label' given for target");
  std::vector<std::pair<std::string, std::string>> m = {
      {"index.npy", npy_bytes(std::vector<int64_t>{0, 1}, {2})},
      {"target.npy", npy_bytes(std::vector<int64_t>{0, 1}, {2})},
      {"label.npy", npy_bytes(std::vector<int64_t>{1, 1}, {2})},
      {"prediction.npy", npy_bytes(std::vector<int64_t>{0, 1}, {2})}};
  expect_error([&] { import_dumps({write_npz_dump("both.npz", m)}, {}); }, "both.npz",
               "given for target");
}

TEST_F(ImportTest, NpyTableWithAllRanks) {
  std::vector<int64_t> flat;
  for (const auto& row : kRows) flat.insert(flat.end(), row.begin(), row.end());
  const std::string p = path("all.npy");
  std::ofstream(p, std::ios::binary) << npy_bytes(flat, {int64_t(kRows.size()), 4});
  const RunFile run = import_dumps({p}, {});
  EXPECT_EQ(run.meta.world_size, 2);
  EXPECT_EQ(run.records.ranks[1].size(), 4u);
  EXPECT_EQ(run.synced.total(), 7);
}

TEST_F(ImportTest, CsvWithAndWithoutHeader) {
  std::string with = "rank,index,target,prediction\n";
  std::string without;
  for (const auto& row : kRows) {
    const std::string line = std::to_string(row[0]) + "," + std::to_string(row[1]) + "," +
                             std::to_string(row[2]) + "," + std::to_string(row[3]) + "\n";
    with += line;
    without += line;
  }
  const RunFile a = import_dumps({write_text("with.csv", with)}, {});
  const RunFile b = import_dumps({write_text("without.csv", without)}, {});
  EXPECT_EQ(a.synced, b.synced);
  EXPECT_EQ(a.per_rank, b.per_rank);
  EXPECT_EQ(a.records.ranks[1].size(), 4u);
  // Columns in another order, with flags.
  const RunFile c = import_dumps(
      {write_text("reordered.csv", "prediction,target,index,rank,flags\n0,0,0,0,0\n2,1,3,1,1\n")},
      {});
  EXPECT_EQ(c.records.ranks[1][0].prediction, 2);
  EXPECT_EQ(c.records.ranks[1][0].flags, 1);
}

TEST_F(ImportTest, DatasetGivesClassCountsAndChecksTargets) {
  const Labels labels = load_labels("synthetic:classes=3,per-class=4");
  std::string csv = "rank,index,target,prediction\n";
  for (int64_t i = 0; i < labels.size(); ++i) {
    csv += std::to_string(i % 2) + "," + std::to_string(i) + "," +
           std::to_string(labels.targets[i]) + "," + std::to_string(labels.targets[i]) + "\n";
  }
  ImportOptions options;
  options.dataset = "synthetic:classes=3,per-class=4";
  const RunFile run = import_dumps({write_text("ok.csv", csv)}, options);
  EXPECT_EQ(run.meta.class_counts, (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(run.meta.class_counts_source, "dataset");
  EXPECT_TRUE(evaluation_from_run(run, "run").diagnosis.correct);

  const int wrong = (labels.targets[5] + 1) % 3;
  std::string bad = "rank,index,target,prediction\n0,5," + std::to_string(wrong) + ",0\n";
  expect_error([&] { import_dumps({write_text("bad.csv", bad)}, options); }, "bad.csv",
               "the dataset says");
  expect_error(
      [&] {
        import_dumps({write_text("far.csv", "rank,index,target,prediction\n0,99,0,0\n")}, options);
      },
      "far.csv", "beyond the dataset");
}

TEST_F(ImportTest, MalformedNpz) {
  auto no_target = rank_members(0);
  no_target.erase(no_target.begin() + 1);
  expect_error([&] { import_dumps({write_npz_dump("nt.npz", no_target)}, {}); }, "nt.npz",
               "target");

  auto short_pred = rank_members(0);
  short_pred[2] = {"prediction.npy", ints({0, 1})};
  expect_error([&] { import_dumps({write_npz_dump("len.npz", short_pred)}, {}); }, "len.npz",
               "different lengths");

  const std::string good = write_npz_dump("good.npz", rank_members(0));
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto cut = write_text("cut.npz", bytes.substr(0, bytes.size() / 2));
  expect_error([&] { import_dumps({cut}, {}); }, "cut.npz", "");
  expect_error([&] { import_dumps({write_text("junk.npz", "PK\x03\x04 garbage")}, {}); },
               "junk.npz", "");
  expect_error([&] { import_dumps({write_text("empty.npz", "")}, {}); }, "empty.npz", "");

  auto no_rank = rank_members(0, false);
  expect_error([&] { import_dumps({write_npz_dump("anon.npz", no_rank)}, {}); }, "anon.npz",
               "rank");

  auto neg = rank_members(0);
  neg.back() = {"rank.npy", npy_bytes(std::vector<int64_t>{-1}, {})};
  expect_error([&] { import_dumps({write_npz_dump("neg.npz", neg)}, {}); }, "neg.npz", "rank -1");

  auto bad_target = rank_members(0);
  bad_target[1] = {"target.npy", ints({0, 1, -7})};
  expect_error([&] { import_dumps({write_npz_dump("t.npz", bad_target)}, {}); }, "t.npz",
               "target -7");

  auto float_index = rank_members(0);
  float_index[0] = {"index.npy", npy_bytes(std::vector<double>{0, 1.5, 2}, {3})};
  expect_error([&] { import_dumps({write_npz_dump("fi.npz", float_index)}, {}); }, "fi.npz",
               "non-integer");

  auto bad_matrix = rank_members(0);
  bad_matrix.push_back({"reported.npy", ints({1, 2, 3})});
  expect_error([&] { import_dumps({write_npz_dump("bm.npz", bad_matrix)}, {}); }, "bm.npz",
               "square");
}

TEST_F(ImportTest, RankConflictsAndGaps) {
  const auto a = write_npz_dump("a.npz", rank_members(0));
  const auto again = write_npz_dump("again.npz", rank_members(0));
  expect_error([&] { import_dumps({a, again}, {}); }, "again.npz", "also appears in");
  // world_size 2 declared, rank 1 missing.
  expect_error([&] { import_dumps({a}, {}); }, "import", "no dump holds rank 1");
  ImportOptions three;
  three.world_size = 3;
  expect_error([&] { import_dumps({a}, three); }, "a.npz", "disagrees");
}

TEST_F(ImportTest, MalformedNpy) {
  const std::string p = path("wide.npy");
  std::ofstream(p, std::ios::binary) << npy_bytes(std::vector<int64_t>(6, 0), {2, 3});
  expect_error([&] { import_dumps({p}, {}); }, "wide.npy", "[N, 4]");
  const std::string f = path("float.npy");
  std::ofstream(f, std::ios::binary) << npy_bytes(std::vector<double>(8, 0), {2, 4});
  expect_error([&] { import_dumps({f}, {}); }, "float.npy", "float");
  const std::string good = npy_bytes(std::vector<int64_t>(8, 0), {2, 4});
  expect_error(
      [&] { import_dumps({write_text("trunc.npy", good.substr(0, good.size() - 3))}, {}); },
      "trunc.npy", "truncated");
  expect_error([&] { import_dumps({write_text("nomagic.npy", "hello")}, {}); }, "nomagic.npy", "");
}

TEST_F(ImportTest, MalformedCsv) {
  expect_error(
      [&] {
        import_dumps({write_text("text.csv", "rank,index,target,prediction\n0,1,cat,0\n")}, {});
      },
      "text.csv", "not an integer");
  expect_error([&] { import_dumps({write_text("nocol.csv", "rank,index,target\n0,1,0\n")}, {}); },
               "nocol.csv", "prediction");
  expect_error(
      [&] {
        import_dumps({write_text("ragged.csv", "rank,index,target,prediction\n0,1,0\n")}, {});
      },
      "ragged.csv", "");
  expect_error([&] { import_dumps({write_text("empty.csv", "")}, {}); }, "empty.csv", "");
  expect_error([&] { import_dumps({write_text("three.csv", "0,1,2\n")}, {}); }, "three.csv",
               "4 or 5 columns");
  expect_error(
      [&] {
        import_dumps({write_text("pred.csv", "rank,index,target,prediction\n0,1,0,-2\n")}, {});
      },
      "pred.csv", "prediction -2");
}

TEST_F(ImportTest, UnknownAndUnsupportedFormats) {
  expect_error([&] { import_dumps({write_text("dump.txt", "x")}, {}); }, "dump.txt",
               "unknown dump format");
  expect_error([&] { import_dumps({write_text("dump.pt", "x")}, {}); }, "dump.pt", "LibTorch");
  expect_error([&] { import_dumps(std::vector<std::string>{}, {}); }, "import", "no dump");
}

// Found by fuzz/fuzz_import: one record with class id 32767 in a 30-byte dump made the
// import allocate two 32768 x 32768 matrices (16 GiB); many ranks did the same with fewer
// classes. The matrices' memory is now bounded before anything is allocated.
TEST_F(ImportTest, ClassCountThatWouldExhaustMemory) {
  const std::string one =
      write_text("big_rank0.csv", "rank,index,target,prediction\n0,0,32767,0\n");
  expect_error([&] { import_dumps({one}, {}); }, "big_rank0.csv",
               "class id 32767 implies 32768 classes, and 2 matrices of 32768 x 32768");
  std::string rows = "rank,index,target,prediction\n";
  for (int r = 0; r < 200; ++r) rows += std::to_string(r) + ",0,999,0\n";
  const std::string many = write_text("ranks.csv", rows);
  expect_error([&] { import_dumps({many}, {}); }, "ranks.csv", "MiB limit");
  ImportOptions huge;
  huge.classes = 20000;
  expect_error([&] { import_dumps({write_text("small.csv", "0,0,1,1\n")}, huge); }, "import",
               "20000 classes need 2 matrices");
  huge.classes = -1;
  expect_error([&] { import_dumps({write_text("small.csv", "0,0,1,1\n")}, huge); }, "import",
               "--classes -1 is out of range");
  // Still fine: 2000 classes on one rank (64 MiB).
  ImportOptions wide;
  wide.classes = 2000;
  EXPECT_EQ(import_dumps({write_text("wide.csv", "0,0,1999,1\n")}, wide).meta.classes, 2000);
}

// The inferred class count used int arithmetic: target INT32_MAX + 1 overflowed.
TEST_F(ImportTest, LargestTargetDoesNotOverflow) {
  const std::string p = write_text("max.csv", "0,0,2147483647,0\n");
  expect_error([&] { import_dumps({p}, {}); }, "import", "cannot tell the number of classes");
}

// The unsynced pitfall as real runs produce it: every rank reports its own local matrix.
// The import keeps each report, logs rank 0's, and the diagnosis names `unsynced`.
TEST_F(ImportTest, RanksThatReportTheirOwnMatrixAreKeptAndDiagnosedUnsynced) {
  auto m0 = rank_members(0);
  auto m1 = rank_members(1);
  // Each rank's own counts (from kRows), written out by hand.
  const std::vector<int64_t> local0 = {1, 0, 0, 0, 1, 0, 1, 0, 0};
  const std::vector<int64_t> local1 = {2, 0, 0, 0, 0, 1, 0, 0, 1};
  m0.push_back({"reported.npy", npy_bytes(local0, {3, 3})});
  m1.push_back({"reported.npy", npy_bytes(local1, {3, 3})});
  const RunFile run = import_dumps({write_npz_dump("a.npz", m0), write_npz_dump("b.npz", m1)}, {});
  ASSERT_EQ(run.reported_per_rank.size(), 2u);
  EXPECT_EQ(run.reported_per_rank[0]->cells, std::vector<double>(local0.begin(), local0.end()));
  EXPECT_EQ(run.reported_per_rank[1]->cells, std::vector<double>(local1.begin(), local1.end()));
  EXPECT_EQ(run.synced, *run.reported_per_rank[0]);  // what rank 0 logged
  save_run_file(run, path("unsynced.slrun"));
  const Evaluation e = load_run_evaluation(path("unsynced.slrun"));
  ASSERT_EQ(e.reported_per_rank.size(), 2u);
  EXPECT_EQ(e.reported_per_rank[1], run.reported_per_rank[1]);
  ASSERT_FALSE(e.diagnosis.findings.empty());
  EXPECT_EQ(e.diagnosis.findings[0].pattern, Pattern::Unsynced);
  EXPECT_NE(describe(e.diagnosis.findings[0]).explanation.find("disagree"), std::string::npos);
}

// Agreeing reports are a synced run: nothing to say about them.
TEST_F(ImportTest, AgreeingReportsAreTheSyncedMatrix) {
  auto m0 = rank_members(0);
  auto m1 = rank_members(1);
  const std::vector<int64_t> sum = {3, 0, 0, 0, 1, 1, 1, 0, 1};
  m0.push_back({"reported.npy", npy_bytes(sum, {3, 3})});
  m1.push_back({"reported.npy", npy_bytes(sum, {3, 3})});
  const Evaluation e = evaluation_from_run(
      import_dumps({write_npz_dump("a.npz", m0), write_npz_dump("b.npz", m1)}, {}), "run");
  for (const Finding& f : e.diagnosis.findings) EXPECT_NE(f.pattern, Pattern::Unsynced);
}

namespace {

// A reported matrix holding a value that is no count, and the words naming it.
struct NonFiniteCase {
  std::string name;
  double bad;
  std::string needle;
};

void PrintTo(const NonFiniteCase& c, std::ostream* os) {
  *os << c.name;
}

class ImportNonFinite : public ImportTest, public ::testing::WithParamInterface<NonFiniteCase> {};

}  // namespace

TEST_P(ImportNonFinite, ReportedMatrixNamesTheFile) {
  const NonFiniteCase& c = GetParam();
  auto m0 = rank_members(0);
  std::vector<double> reported(9, 1.0);
  reported[4] = c.bad;
  m0.push_back({"reported.npy", npy_bytes(reported, {3, 3})});
  const auto a = write_npz_dump("nan.npz", m0);
  const auto b = write_npz_dump("b.npz", rank_members(1));
  expect_error([&] { import_dumps({a, b}, {}); }, "nan.npz", c.needle);
}

INSTANTIATE_TEST_SUITE_P(
    ImportTest, ImportNonFinite,
    ::testing::Values(NonFiniteCase{"NaN", std::nan(""), "holds NaN at row 1, column 1"},
                      NonFiniteCase{"Infinity", std::numeric_limits<double>::infinity(),
                                    "holds an infinity"}),
    shardlens::test::NamedRow{});

// An index of 10^12 with no dataset would size per-index state at a terabyte.
TEST_F(ImportTest, HugeIndexIsAOneLineErrorNamingTheDump) {
  const std::string csv = "rank,index,target,prediction\n0,1000000000000,0,0\n";
  expect_error([&] { import_dumps({write_text("huge.csv", csv)}, {}); }, "huge.csv",
               "beyond the largest dataset");
}

// A run over the first 10 of 12 samples: the full dataset is refused with a hint, the
// subset spec imports, and since every subset index was evaluated the expected matrix is
// known; with a batch limit it is not, and --predictions gives it.
TEST_F(ImportTest, SubsetsAndTheExpectedMatrix) {
  const Labels labels = load_labels("synthetic:classes=3,per-class=4");
  auto csv_of = [&](int64_t n) {
    std::string csv = "rank,index,target,prediction\n";
    for (int64_t i = 0; i < n; ++i)
      csv += std::to_string(i % 2) + "," + std::to_string(i) + "," +
             std::to_string(labels.targets[i]) + "," + std::to_string((labels.targets[i] + i) % 3) +
             "\n";
    return csv;
  };
  std::vector<std::pair<std::string, std::string>> members = {
      {"rank.npy", npy_bytes(std::vector<int64_t>{0}, {})},
      {"index.npy", ints({0})},
      {"target.npy", ints({labels.targets[0]})},
      {"prediction.npy", ints({0})},
      {"dataset_size.npy", npy_bytes(std::vector<int64_t>{10}, {})}};
  ImportOptions full;
  full.dataset = "synthetic:classes=3,per-class=4";
  expect_error([&] { import_dumps({write_npz_dump("sized.npz", members)}, full); }, "sized.npz",
               "synthetic:classes=3,per-class=4,first=10");

  ImportOptions subset;
  subset.dataset = "synthetic:classes=3,per-class=4,first=10";
  const Evaluation e =
      evaluation_from_run(import_dumps({write_text("ten.csv", csv_of(10))}, subset), "ten");
  EXPECT_EQ(e.meta.dataset_size, 10);
  EXPECT_EQ(e.meta.dataset, subset.dataset);
  ASSERT_TRUE(e.expected.has_value());
  Matrix want(3);
  for (int64_t i = 0; i < 10; ++i) want.at(labels.targets[i], (labels.targets[i] + i) % 3) += 1;
  EXPECT_EQ(*e.expected, want);

  // Only 6 of the 10 evaluated (a batch limit): the expected matrix is unknown, and why.
  const Evaluation cut =
      evaluation_from_run(import_dumps({write_text("six.csv", csv_of(6))}, subset), "six");
  EXPECT_FALSE(cut.expected.has_value());
  EXPECT_NE(cut.expected_missing.find("4 of 10 samples were never evaluated"), std::string::npos)
      << cut.expected_missing;

  // --predictions: one per dataset index, checked against what the ranks recorded.
  std::vector<int64_t> predictions;
  for (int64_t i = 0; i < 10; ++i) predictions.push_back((labels.targets[i] + i) % 3);
  const std::string preds = path("preds.npy");
  std::ofstream(preds, std::ios::binary) << ints(predictions);
  subset.predictions = preds;
  const Evaluation known =
      evaluation_from_run(import_dumps({write_text("six.csv", csv_of(6))}, subset), "six");
  ASSERT_TRUE(known.expected.has_value());
  EXPECT_EQ(*known.expected, want);
  predictions[3] = (predictions[3] + 1) % 3;
  std::ofstream(preds, std::ios::binary | std::ios::trunc) << ints(predictions);
  expect_error([&] { import_dumps({write_text("six.csv", csv_of(6))}, subset); }, "six.csv",
               "preds.npy says");
  ImportOptions no_dataset;
  no_dataset.predictions = preds;
  expect_error([&] { import_dumps({write_text("six.csv", csv_of(6))}, no_dataset); },
               "--predictions", "needs --dataset");
}

// Dumps of several epochs: grouped by their `epoch` array or file name, one run per epoch;
// a Lightning sanity-check dump is left out with a note; mixing named and unnamed epochs is
// refused naming the dump.
TEST_F(ImportTest, EpochsAreImportedTogether) {
  std::vector<std::string> paths;
  for (int epoch = 0; epoch < 3; ++epoch)
    for (int rank = 0; rank < 2; ++rank) {
      auto m = rank_members(rank);
      if (rank == 0) m.push_back({"epoch.npy", npy_bytes(std::vector<int64_t>{epoch}, {})});
      // rank 1 says its epoch through the file name only
      paths.push_back(write_npz_dump(
          "eval_epoch" + std::to_string(epoch) + "_rank" + std::to_string(rank) + ".npz", m));
    }
  auto sanity = rank_members(0);
  sanity.push_back({"sanity.npy", npy_bytes(std::vector<int64_t>{1}, {})});
  paths.push_back(write_npz_dump("eval_sanity_epoch0_rank0.npz", sanity));
  const ImportedRun run = import_epochs(paths, {});
  ASSERT_EQ(run.epochs.size(), 3u);
  for (int epoch = 0; epoch < 3; ++epoch) {
    EXPECT_EQ(run.epochs[size_t(epoch)].meta.epoch, epoch);
    EXPECT_EQ(run.epochs[size_t(epoch)].synced.total(), 7);  // the sanity dump is not in epoch 0
  }
  ASSERT_EQ(run.notes.size(), 1u);
  EXPECT_NE(run.notes[0].find("sanity"), std::string::npos);

  // Saved as one file of three epochs and read back, in order; one epoch at a time is refused.
  save_run_epochs(run.epochs, path("epochs.slrun"));
  const std::vector<Evaluation> back = load_run_evaluations(path("epochs.slrun"));
  ASSERT_EQ(back.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(back[k].epoch(), int64_t(k));
    EXPECT_EQ(back[k].provenance.epochs, 3u);
    EXPECT_EQ(back[k].synced, run.epochs[k].synced);
  }
  expect_error([&] { load_run_file(path("epochs.slrun")); }, "epochs.slrun", "holds 3 epochs");
  EXPECT_EQ(select_epoch(back, 2, "epochs.slrun").synced, run.epochs[2].synced);
  expect_error([&] { select_epoch(back, 9, "epochs.slrun"); }, "epochs.slrun",
               "holds epochs 0, 1, 2; no epoch 9");

  const auto stray = write_npz_dump("eval_rank0.npz", rank_members(0));
  expect_error([&] { import_epochs({paths[0], stray}, {}); }, "eval_rank0.npz", "names no epoch");
}

// A multi-epoch file whose parts disagree, or holds strays, is refused with the reason.
TEST_F(ImportTest, MalformedMultiEpochRunFiles) {
  std::vector<RunFile> epochs;
  for (int epoch : {2, 5}) {
    RunFile r = import_dumps(
        {write_npz_dump("a.npz", rank_members(0)), write_npz_dump("b.npz", rank_members(1))}, {});
    r.meta.epoch = epoch;
    epochs.push_back(std::move(r));
  }
  auto members = run_epochs_members(epochs);
  write_npz(path("ok.slrun"), members);
  EXPECT_EQ(load_run_evaluations(path("ok.slrun")).size(), 2u);
  // A stray member beside the epochs.
  auto stray = members;
  stray.emplace_back("epoch9_rank0_index.npy", ints({0}));
  write_npz(path("stray.slrun"), stray);
  expect_error([&] { load_run_epochs(path("stray.slrun")); }, "stray.slrun", "unexpected member");
  // Epochs out of order.
  std::swap(epochs[0], epochs[1]);
  EXPECT_THROW(run_epochs_members(epochs), InputError);
  // The list names an epoch whose members are absent.
  auto missing = members;
  std::erase_if(missing, [](const auto& m) { return m.first.rfind("epoch5_", 0) == 0; });
  write_npz(path("missing.slrun"), missing);
  expect_error([&] { load_run_epochs(path("missing.slrun")); }, "missing.slrun: epoch 5",
               "meta.json");
}

namespace {

constexpr const char* kTwoRankDataset = "synthetic:classes=2,per-class=10";

// 16 of kTwoRankDataset's 20 samples on 2 ranks, right predictions: DistributedSampler's
// unshuffled order (rank r's k-th sample is r + 2k), each rank stopped after 8 (as a loader
// drop_last with batches of 4 does, or a limit of 2 batches, or a subset).
std::string two_ranks_stopped_early_csv() {
  const Labels labels = load_labels(kTwoRankDataset);
  std::string csv = "rank,index,target,prediction\n";
  for (int rank = 0; rank < 2; ++rank)
    for (int k = 0; k < 8; ++k) {
      const int64_t i = rank + 2 * k;
      csv += std::to_string(rank) + "," + std::to_string(i) + "," +
             std::to_string(labels.targets[size_t(i)]) + "," +
             std::to_string(labels.targets[size_t(i)]) + "\n";
    }
  return csv;
}

}  // namespace

// CSV dumps of a loader drop_last evaluation (20 samples on 2 ranks, batches of 4: each rank's
// 2 full batches kept, its last 2 samples dropped), imported with the dataset but without
// settings: the records cannot tell drop_last from a batch limit or a subset, so the finding
// names every cause and the evidence that decides; the unknown expected matrix gives no
// metrics table.
TEST_F(ImportTest, MissingSamplesWithoutSettingsAreNotABatchLimit) {
  ImportOptions options;
  options.dataset = kTwoRankDataset;
  const Evaluation e = evaluation_from_run(
      import_dumps({write_text("drop.csv", two_ranks_stopped_early_csv())}, options), "drop");
  ASSERT_FALSE(e.diagnosis.correct);
  EXPECT_EQ(e.diagnosis.missing_samples, 4);
  ASSERT_EQ(e.diagnosis.findings.size(), 1u);
  EXPECT_EQ(std::string(pattern_id(e.diagnosis.findings[0].pattern)), "never-evaluated");
  const std::string text = report_text(e);
  EXPECT_EQ(text.find("Batch limit evaluates a subset"), std::string::npos) << text;
  EXPECT_NE(text.find("4 samples never evaluated (of 20): consistent with a batch limit, "
                      "the loader's drop_last or a subset"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("last indices (16-19)"), std::string::npos) << text;
  // No expected matrix: no metrics table and no metric row.
  EXPECT_FALSE(e.expected.has_value());
  EXPECT_TRUE(metric_rows(e).empty());
  EXPECT_EQ(text.find("Metrics (reported vs expected"), std::string::npos) << text;
}

// The same dumps with settings that say the loader kept its last batch and no limit was in
// force: neither is named among the causes, only a subset of the dataset is left.
TEST_F(ImportTest, MissingSamplesNameNoCauseTheRecordedSettingsRuleOut) {
  ImportOptions options;
  options.dataset = kTwoRankDataset;
  RunFile run = import_dumps({write_text("kept.csv", two_ranks_stopped_early_csv())}, options);
  run.meta.recorded =
      parse_recorded_settings(R"({"loader_drop_last": false, "limit_batches": "all"})", "test");
  const Evaluation e = evaluation_from_run(run, "kept");
  ASSERT_EQ(e.diagnosis.findings.size(), 1u);
  EXPECT_EQ(std::string(pattern_id(e.diagnosis.findings[0].pattern)), "never-evaluated");
  const std::string text = report_text(e);
  EXPECT_NE(text.find("4 samples never evaluated (of 20): consistent with a subset of the "
                      "dataset."),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("consistent with the loader's drop_last"), std::string::npos) << text;
  EXPECT_EQ(text.find("consistent with a batch limit"), std::string::npos) << text;

  // Only drop_last ruled out: a batch limit stays among the causes.
  run.meta.recorded = parse_recorded_settings(R"({"loader_drop_last": false})", "test");
  const std::string limit = report_text(evaluation_from_run(run, "kept"));
  EXPECT_NE(limit.find("consistent with a batch limit or a subset of the dataset."),
            std::string::npos)
      << limit;
}

// A shuffled order "changes every epoch" only where the epochs show it: two imported epochs in
// other orders say so; one epoch alone says what its order decides, no change.
TEST_F(ImportTest, OrderChangeIsClaimedOnlyFromSeveralEpochs) {
  // 16 of 20 samples on 2 ranks, each rank's order shuffled; epoch 1 in other orders.
  const std::vector<std::vector<std::vector<int64_t>>> orders = {
      {{17, 3, 9, 11, 1, 15, 7, 19}, {0, 8, 4, 12, 16, 2, 10, 6}},
      {{6, 14, 2, 18, 10, 0, 12, 4}, {9, 1, 13, 5, 19, 11, 3, 15}}};
  const auto csv_of = [](const std::vector<std::vector<int64_t>>& ranks) {
    std::string csv = "rank,index,target,prediction\n";
    for (size_t r = 0; r < ranks.size(); ++r)
      for (int64_t i : ranks[r])
        csv += std::to_string(r) + "," + std::to_string(i) + "," + std::to_string(i % 2) + "," +
               std::to_string(i % 2) + "\n";
    return csv;
  };
  ImportOptions options;
  options.dataset = "synthetic:counts=10,10,layout=interleaved";
  std::vector<RunFile> epochs;
  for (int epoch = 0; epoch < 2; ++epoch) {
    RunFile run = import_dumps(
        {write_text("e" + std::to_string(epoch) + ".csv", csv_of(orders[size_t(epoch)]))}, options);
    run.meta.epoch = epoch;
    epochs.push_back(std::move(run));
  }
  const auto shuffled_words = [](const Evaluation& e) {
    for (const Finding& f : e.diagnosis.findings)
      if (f.pattern == Pattern::ShuffledEval) return describe(f).explanation;
    return std::string("(no shuffled-eval finding)");
  };
  const std::string one = shuffled_words(evaluation_from_run(epochs[0], "one"));
  EXPECT_NE(one.find("shuffled"), std::string::npos) << one;
  EXPECT_EQ(one.find("change every epoch"), std::string::npos) << one;
  write_npz(path("two.slrun"), run_epochs_members(epochs));
  const std::vector<Evaluation> both = load_run_evaluations(path("two.slrun"));
  ASSERT_EQ(both.size(), 2u);
  for (const Evaluation& e : both) {
    const std::string words = shuffled_words(e);
    EXPECT_NE(words.find("change every epoch"), std::string::npos) << words;
  }
}

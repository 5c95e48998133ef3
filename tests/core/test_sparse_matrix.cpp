// Matrices stored as their nonzero cells: the [K, 3] form dumps and run files use where it is
// smaller, read back exactly, and every malformed form refused before it is built.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/sha256.h"
#include "core/runfile/import.h"
#include "core/runfile/import_arrays.h"
#include "core/runfile/runfile.h"
#include "core/runfile/sparse_matrix.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace fs = std::filesystem;
using namespace shardlens;

namespace {

constexpr int32_t kC = 100;  // 10^4 cells: past kSparseMinCells

// A matrix of kC classes with a few counts (and a fraction where asked).
Matrix few_counts(double fraction = 0) {
  Matrix m(kC);
  m.at(0, 0) = 3;
  m.at(1, 2) = 2;
  m.at(99, 98) = 7;
  if (fraction != 0) m.at(5, 5) = fraction;
  return m;
}

DumpArray sparse_array(const std::string& npy) {
  return dump_import::array_from_npy(npy, "test");
}

DumpArray cells(std::vector<int64_t> values) {
  DumpArray a;
  a.shape = {int64_t(values.size() / 3), 3};
  a.ints = std::move(values);
  return a;
}

DumpArray real_cells(std::vector<double> values) {
  DumpArray a;
  a.integral = false;
  a.shape = {int64_t(values.size() / 3), 3};
  a.reals = std::move(values);
  return a;
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

struct BudgetGuard {
  explicit BudgetGuard(uint64_t bytes) { set_load_budget(bytes); }
  ~BudgetGuard() { set_load_budget(0); }
};

TEST(SparseMatrix, RoundTripsIntegersAndFractionsExactly) {
  for (const Matrix& m : {few_counts(), few_counts(0.1 + 0.2)}) {
    const std::optional<std::string> npy = sparse_matrix_npy(m);
    ASSERT_TRUE(npy);
    const DumpArray a = sparse_array(*npy);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{m.cells[5 * kC + 5] != 0 ? 4 : 3, 3}));
    EXPECT_EQ(a.integral, m.cells[5 * kC + 5] == 0);  // int64 unless a value is a fraction
    EXPECT_EQ(matrix_from_sparse(a, kC, "m", "test"), m);
  }
  // An empty matrix is zero cells; an int64 count past 2^53 keeps every bit in an int64 cell.
  EXPECT_EQ(matrix_from_sparse(sparse_array(*sparse_matrix_npy(Matrix(kC))), kC, "m", "t"),
            Matrix(kC));
  Matrix big(kC);
  big.at(3, 4) = double(int64_t(1) << 60);
  const DumpArray a = sparse_array(*sparse_matrix_npy(big));
  ASSERT_TRUE(a.integral);
  EXPECT_EQ(a.ints[2], int64_t(1) << 60);
}

TEST(SparseMatrix, StaysDenseWhenSmallOrFull) {
  Matrix small(3);
  small.at(0, 0) = 1;
  EXPECT_FALSE(sparse_matrix_npy(small));  // 9 cells: below kSparseMinCells
  Matrix full(kC);
  for (size_t i = 0; i < full.cells.size(); i += 3) full.cells[i] = 1;  // a third nonzero
  EXPECT_FALSE(sparse_matrix_npy(full));
  full.cells[0] = 0;  // one fewer: 3 * K < C * C
  EXPECT_TRUE(sparse_matrix_npy(full));
}

TEST(SparseMatrix, RefusesMalformedCells) {
  const std::vector<std::pair<DumpArray, std::string>> cases = {
      {cells({0, 0, 1, 100, 0, 1}), "gives the row 100 in its entry 1, outside the 100 classes"},
      {cells({0, -1, 1}), "gives the column -1 in its entry 0"},
      {cells({1, 2, 3, 1, 2, 4}), "gives the cell at row 1, column 2 twice"},
      {cells({1, 2, 3, 4, 4, 0}), "lists the cell at row 4, column 4 as 0"},
      {real_cells({0.5, 0, 1}), "gives the row 0.5"},
      {real_cells({std::nan(""), 0, 1}), "(not a class)"},
      {real_cells({0, 1e300, 1}), "(not a class)"},
  };
  for (const auto& [a, needle] : cases) {
    const std::string what =
        refusal([&] { matrix_from_sparse(a, kC, "reported_sparse", "d.npz"); });
    EXPECT_NE(what.find("d.npz: 'reported_sparse' "), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
  // Lying sizes: a shape that is not [K, 3], more cells than the matrix has, values that do not
  // fill the shape, a class count out of range.
  DumpArray four = cells({0, 0, 1, 0});
  four.shape = {1, 4};
  EXPECT_NE(refusal([&] { matrix_from_sparse(four, kC, "m", "o"); }).find("[K, 3]"),
            std::string::npos);
  DumpArray many = cells({0, 0, 1});
  many.shape = {5, 3};  // 5 cells of a 2 x 2 matrix
  EXPECT_NE(
      refusal([&] { matrix_from_sparse(many, 2, "m", "o"); }).find("lists 5 cells of a 2 x 2"),
      std::string::npos);
  many.shape = {2, 3};
  EXPECT_NE(refusal([&] { matrix_from_sparse(many, kC, "m", "o"); }).find("holds 3 values"),
            std::string::npos);
  EXPECT_NE(refusal([&] { matrix_from_sparse(cells({}), 0, "m", "o"); }).find("0 classes"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              matrix_from_sparse(cells({}), int64_t(kMaxClasses) + 1, "m", "o");
            }).find("outside 1 to"),
            std::string::npos);
}

TEST(SparseMatrix, ChargesTheDenseMatrixToTheBudgetFirst) {
  // Three bytes of cells that claim the largest matrix: refused before it is allocated.
  const BudgetGuard budget(uint64_t(64) << 20);
  const std::string what = refusal([&] {
    matrix_from_sparse(cells({0, 0, 1}), kMaxClasses, "reported_sparse", "d.npz");
  });
  EXPECT_NE(what.find("d.npz: needs"), std::string::npos) << what;
  EXPECT_NE(what.find("its sparse 'reported_sparse' as a 32768 x 32768 matrix"), std::string::npos)
      << what;
}

// --- dumps -----------------------------------------------------------------------------------

class SparseDumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("shardlens_sparse_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  // One rank's dump of 3 records at kC classes, with `extra` members (name.npy -> bytes).
  std::string dump(const std::string& name, int rank,
                   std::map<std::string, std::string> extra) const {
    auto ints = [](std::vector<int64_t> v) { return npy_bytes(v, {int64_t(v.size())}); };
    extra["index.npy"] = ints({rank * 3 + 0, rank * 3 + 1, rank * 3 + 2});
    extra["target.npy"] = ints({0, 1, 99});
    extra["prediction.npy"] = ints({0, 2, 98});
    extra["rank.npy"] = npy_bytes(std::vector<int64_t>{rank}, {});
    extra["world_size.npy"] = npy_bytes(std::vector<int64_t>{2}, {});
    const std::string path = (m_dir / name).string();
    write_npz(path, std::vector<std::pair<std::string, std::string>>(extra.begin(), extra.end()));
    return path;
  }

  static std::string dense(const Matrix& m) {
    std::vector<int64_t> v(m.cells.begin(), m.cells.end());
    return npy_bytes(v, {m.classes, m.classes});
  }
  static std::string classes(int64_t c) { return npy_bytes(std::vector<int64_t>{c}, {}); }

  fs::path m_dir;
};

TEST_F(SparseDumpTest, ImportsAsTheDenseFormDoes) {
  Matrix reported(kC);
  reported.at(0, 0) = 2;
  reported.at(1, 2) = 2;
  reported.at(99, 98) = 2;
  Matrix local(kC);
  local.at(0, 0) = local.at(1, 2) = local.at(99, 98) = 1;
  const std::string sparse_reported = *sparse_matrix_npy(reported);
  const std::string sparse_local = *sparse_matrix_npy(local);
  const RunFile from_dense = import_dumps(
      {dump("a_rank0.npz", 0, {{"reported.npy", dense(reported)}, {"matrix.npy", dense(local)}}),
       dump("a_rank1.npz", 1, {{"reported.npy", dense(reported)}})},
      {});
  const RunFile from_sparse =
      import_dumps({dump("b_rank0.npz", 0,
                         {{"reported_sparse.npy", sparse_reported},
                          {"matrix_sparse.npy", sparse_local},
                          {"sparse_classes.npy", classes(kC)}}),
                    dump("b_rank1.npz", 1, {{"reported.npy", dense(reported)}})},
                   {});
  EXPECT_EQ(from_sparse.meta.classes, kC);
  EXPECT_EQ(from_sparse.synced, from_dense.synced);
  EXPECT_EQ(from_sparse.synced, reported);
  EXPECT_EQ(from_sparse.per_rank, from_dense.per_rank);
  EXPECT_EQ(from_sparse.reported_per_rank, from_dense.reported_per_rank);
}

TEST_F(SparseDumpTest, RefusesMalformedSparseMatrices) {
  const std::string good = *sparse_matrix_npy(few_counts());
  const std::string one = *sparse_matrix_npy(few_counts(1));  // a 4th cell (5, 5)
  auto cells_npy = [](std::vector<int64_t> v) { return npy_bytes(v, {int64_t(v.size() / 3), 3}); };
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"reported_sparse.npy", good}}, "'reported_sparse' needs 'sparse_classes'"},
      {{{"reported_sparse.npy", good},
        {"reported.npy", dense(few_counts())},
        {"sparse_classes.npy", classes(kC)}},
       "both 'reported' and 'reported_sparse' given"},
      {{{"reported_sparse.npy", good}, {"sparse_classes.npy", classes(0)}},
       "'sparse_classes' = 0 is out of range"},
      {{{"reported_sparse.npy", good}, {"sparse_classes.npy", classes(1)}},
       "'reported_sparse' lists 3 cells of a 1 x 1 matrix"},
      {{{"reported_sparse.npy", good}, {"sparse_classes.npy", classes(2)}},
       "'reported_sparse' gives the column 2 in its entry 1, outside the 2 classes"},
      {{{"reported_sparse.npy", one}, {"sparse_classes.npy", classes(5)}},
       "'reported_sparse' gives the row 5 in its entry 2, outside the 5 classes"},
      {{{"matrix_sparse.npy", cells_npy({0, 0, 1, 0, 0, 2})}, {"sparse_classes.npy", classes(kC)}},
       "'matrix_sparse' gives the cell at row 0, column 0 twice"},
      {{{"matrix_sparse.npy", cells_npy({0, 0, -4})}, {"sparse_classes.npy", classes(kC)}},
       "'matrix_sparse' holds -4 at row 0, column 0"},
      {{{"reported_sparse.npy", npy_bytes(std::vector<double>{0, 0, std::nan("")}, {1, 3})},
        {"sparse_classes.npy", classes(kC)}},
       "'reported_sparse' holds NaN at row 0, column 0"},
      {{{"reported_sparse.npy", npy_bytes(std::vector<int64_t>(4), {1, 4})},
        {"sparse_classes.npy", classes(kC)}},
       "'reported_sparse' is not an array [K, 3]"},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const std::string path = dump("bad" + std::to_string(k) + "_rank0.npz", 0, cases[k].first);
    const std::string what = refusal([&] { import_dumps({path}, {}); });
    EXPECT_NE(what.find(path + ": "), std::string::npos) << k << ": " << what;
    EXPECT_NE(what.find(cases[k].second), std::string::npos) << k << ": " << what;
  }
}

TEST_F(SparseDumpTest, ChargesASparseMatrixToTheBudgetFromItsHeaders) {
  // 3 cells claiming the largest matrix: the dump's memory, from sparse_classes read first,
  // is past the budget before anything else is inflated.
  const BudgetGuard budget(uint64_t(256) << 20);
  const std::string path = dump("huge_rank0.npz", 0,
                                {{"reported_sparse.npy", *sparse_matrix_npy(few_counts())},
                                 {"sparse_classes.npy", classes(kMaxClasses)}});
  const std::string what = refusal([&] { import_dumps({path}, {}); });
  EXPECT_NE(what.find(path + ": needs"), std::string::npos) << what;
  EXPECT_NE(what.find("its arrays and the records built from them"), std::string::npos) << what;
}

// --- run files -------------------------------------------------------------------------------

// Two ranks at kC classes, every rank reporting the synced matrix.
RunFile wide_run() {
  RunFile run;
  run.meta.source = "imported";
  run.meta.backend = "import";
  run.meta.classes = kC;
  run.meta.class_counts.assign(kC, 0);
  run.meta.class_counts[0] = 2;
  run.meta.class_counts[1] = 2;
  run.meta.class_counts[99] = 2;
  run.meta.dataset_size = 6;
  run.meta.world_size = 2;
  run.records.ranks = {{{0, 0, 0, 0}, {1, 1, 2, 0}, {2, 99, 98, 0}},
                       {{3, 0, 0, 0}, {4, 1, 2, 0}, {5, 99, 98, 0}}};
  run.per_rank = matrices_from_records(run.records, kC, -1);
  run.synced = run.per_rank[0];
  run.synced += run.per_rank[1];
  run.reported_per_rank = {run.synced, run.synced};
  return run;
}

std::map<std::string, std::string> members_of(const RunFile& run) {
  auto list = run_file_members(run);
  return {list.begin(), list.end()};
}

std::string pack(const std::map<std::string, std::string>& members) {
  const std::string path =
      (fs::temp_directory_path() / ("shardlens_sparse_pack_" + std::to_string(::getpid()) + ".npz"))
          .string();
  write_npz(path, std::vector<std::pair<std::string, std::string>>(members.begin(), members.end()));
  std::string bytes = read_file_bytes(path);
  fs::remove(path);
  return bytes;
}

// The members after `edit`, meta.json's checksums refreshed.
std::string edited(
    std::map<std::string, std::string> members,
    const std::function<void(std::map<std::string, std::string>&, nlohmann::json&)>& edit) {
  nlohmann::json meta = nlohmann::json::parse(members.at("meta.json"));
  edit(members, meta);
  nlohmann::json sums = nlohmann::json::object();
  for (const auto& [name, data] : members)
    if (name != "meta.json") sums[name] = {{"sha256", sha256_hex(data)}, {"bytes", data.size()}};
  meta["members"] = sums;
  members["meta.json"] = meta.dump();
  return pack(members);
}

TEST(SparseRunFile, StoresLargeMatricesSparseAndReadsThemBackExactly) {
  const RunFile run = wide_run();
  const auto members = members_of(run);
  for (const char* name :
       {"rank0_matrix_sparse.npy", "rank1_matrix_sparse.npy", "synced_sparse.npy"})
    EXPECT_TRUE(members.count(name)) << name;
  for (const char* name : {"synced.npy", "rank0_matrix.npy", "rank0_reported.npy",
                           "rank0_reported_sparse.npy", "rank1_reported_sparse.npy"})
    EXPECT_FALSE(members.count(name)) << name;
  const nlohmann::json meta = nlohmann::json::parse(members.at("meta.json"));
  EXPECT_EQ(meta["format_version"], kRunFormatVersionSparse);
  EXPECT_EQ(meta["reported_same_as_synced"], nlohmann::json::array({0, 1}));
  const RunFile back = parse_run_file(pack(members), "wide.slrun");
  EXPECT_EQ(back.synced, run.synced);
  EXPECT_EQ(back.per_rank, run.per_rank);
  EXPECT_EQ(back.reported_per_rank, run.reported_per_rank);
  // A rank that reported something else keeps its own member.
  RunFile other = run;
  other.reported_per_rank[1]->at(5, 5) = 1;
  const auto other_members = members_of(other);
  EXPECT_TRUE(other_members.count("rank1_reported_sparse.npy"));
  EXPECT_EQ(parse_run_file(pack(other_members), "o.slrun").reported_per_rank,
            other.reported_per_rank);
}

TEST(SparseRunFile, SmallRunsStayVersionOneAndDense) {
  RunFile run = wide_run();
  run.meta.classes = 3;
  run.meta.class_counts = {2, 2, 2};
  for (auto& rank : run.records.ranks)
    for (Record& r : rank) r.target = r.prediction = r.target % 3;
  run.per_rank = matrices_from_records(run.records, 3, -1);
  run.synced = run.per_rank[0];
  run.synced += run.per_rank[1];
  run.reported_per_rank = {run.synced, run.synced};
  const auto members = members_of(run);
  EXPECT_TRUE(members.count("synced.npy"));
  EXPECT_TRUE(members.count("rank1_reported.npy"));
  EXPECT_EQ(nlohmann::json::parse(members.at("meta.json"))["format_version"], kRunFormatVersion);
}

TEST(SparseRunFile, RefusesMalformedSparseMembers) {
  const auto members = members_of(wide_run());
  const std::string cells = members.at("synced_sparse.npy");
  using Edit = std::function<void(std::map<std::string, std::string>&, nlohmann::json&)>;
  const std::vector<std::pair<Edit, std::string>> cases = {
      {[&](auto& m, auto&) {
         m["synced.npy"] = npy_bytes(std::vector<int64_t>(kC * kC), {kC, kC});
       },
       "members synced.npy and synced_sparse.npy both given"},
      {[&](auto&, auto& j) { j["format_version"] = 1; },
       "member rank0_matrix_sparse.npy in a file of format version 1"},
      {[&](auto&, auto& j) { j["format_version"] = kRunFormatVersionCells + 1; },
       "run file format version " + std::to_string(kRunFormatVersionCells + 1) + " is newer"},
      {[&](auto&, auto& j) { j["format_version"] = 3; }, "is not the version of one evaluation"},
      {[&](auto& m, auto&) { m.erase("rank1_matrix_sparse.npy"); }, "rank1_matrix.npy is missing"},
      {[&](auto& m, auto&) {
         m["synced_sparse.npy"] = npy_bytes(std::vector<int64_t>{0, 0, 2, 0, 0, 2}, {2, 3});
       },
       "'synced_sparse.npy' gives the cell at row 0, column 0 twice"},
      {[&](auto& m, auto&) {
         m["synced_sparse.npy"] = npy_bytes(std::vector<int64_t>{0, kC, 2}, {1, 3});
       },
       "gives the column 100 in its entry 0, outside the 100 classes"},
      {[&](auto& m, auto&) {
         m["synced_sparse.npy"] = npy_bytes(std::vector<int64_t>{0, 0, -2}, {1, 3});
       },
       "holds -2 at row 0, column 0"},
      {[&](auto& m, auto&) {
         m["synced_sparse.npy"] = npy_bytes(std::vector<int64_t>(3 * 3), {3, 3});
       },
       "lists the cell at row 0, column 0 as 0 (only nonzero cells are listed)"},
      {[&](auto&, auto& j) {
         j["reported_same_as_synced"] = {0, 2};
       },
       "rank 2 out of range"},
      {[&](auto&, auto& j) {
         j["reported_same_as_synced"] = {1, 1};
       },
       "rank 1 is listed twice"},
      {[&](auto& m, auto& j) {
         m["rank0_reported_sparse.npy"] = cells;
         j["reported_same_as_synced"] = {0};
       },
       "rank 0 is listed twice or has its own reported matrix"},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    const std::string what =
        refusal([&] { parse_run_file(edited(members, cases[k].first), "bad.slrun"); });
    EXPECT_NE(what.find("bad.slrun"), std::string::npos) << k << ": " << what;
    EXPECT_NE(what.find(cases[k].second), std::string::npos) << k << ": " << what;
  }
}

}  // namespace

// Tests for the load budget (core/model/memory_budget.h) and the readers that honour it:
// hostile files are refused from what they declare, before the data is allocated (issue 17).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/io/csv.h"
#include "core/io/files.h"
#include "core/io/idx.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/model/memory_budget.h"
#include "core/runfile/import.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

using io_test::gzip;
using io_test::TempDir;
using io_test::write_bytes;

// Sets the budget for one test and restores the default after it.
struct BudgetGuard {
  explicit BudgetGuard(uint64_t bytes) { set_load_budget(bytes); }
  ~BudgetGuard() { set_load_budget(0); }
};

TEST(MemoryBudget, ParsesSizesInBinaryUnits) {
  EXPECT_EQ(parse_memory_size("512M"), uint64_t(512) << 20);
  EXPECT_EQ(parse_memory_size("2G"), uint64_t(2) << 30);
  EXPECT_EQ(parse_memory_size("2GB"), uint64_t(2) << 30);
  EXPECT_EQ(parse_memory_size("1.5GiB"), uint64_t(3) << 29);
  EXPECT_EQ(parse_memory_size(" 64k "), uint64_t(64) << 10);
  EXPECT_EQ(parse_memory_size("800000000"), uint64_t(800000000));
  EXPECT_EQ(parse_memory_size("1T"), uint64_t(1) << 40);
  for (const char* bad : {"", "0", "lots", "2X", "M", ".", "-1G", "1.2.3G"})
    EXPECT_FALSE(parse_memory_size(bad)) << bad;
}

TEST(MemoryBudget, DefaultIsHalfOfMemTotal) {
  // Read independently of the code under test.
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  uint64_t kib = 0;
  while (std::getline(meminfo, line))
    if (line.rfind("MemTotal:", 0) == 0) kib = std::stoull(line.substr(9));
  if (kib == 0) GTEST_SKIP() << "no MemTotal in /proc/meminfo";
  EXPECT_EQ(physical_memory_bytes(), kib * 1024);
  EXPECT_EQ(default_load_budget(), kib * 1024 / 2);
  EXPECT_EQ(load_budget(), default_load_budget());
  {
    BudgetGuard guard(12345);
    EXPECT_EQ(load_budget(), 12345u);
  }
  EXPECT_EQ(load_budget(), default_load_budget());
}

TEST(MemoryBudget, RefusalNamesTheFileTheNeedAndTheBudget) {
  BudgetGuard guard(uint64_t(512) << 20);
  EXPECT_NO_THROW(check_load_budget("f.npz", uint64_t(512) << 20, "x"));
  EXPECT_INPUT_ERROR(check_load_budget("f.npz", uint64_t(3) << 30, "its arrays"), "f.npz: ",
                     "needs 3.0 GiB of memory (its arrays), more than the 512 MiB memory budget");
  EXPECT_EQ(memory_size_text(300), "300 bytes");
  EXPECT_EQ(memory_size_text(uint64_t(1536) << 20), "1.5 GiB");
}

// An .npy header for `count` int64 values followed by `data_bytes` zero bytes, deflated
// in a ZIP by libzip (through write_npz) with a directory that tells the truth.
std::string zeros_npy(int64_t count, size_t data_bytes) {
  std::string bytes = npy_bytes(std::vector<int64_t>{}, {0});
  // Same header layout for any count: rewrite the shape in place, padded with spaces.
  const std::string from = "(0,)", to = "(" + std::to_string(count) + ",)";
  const size_t at = bytes.find(from);
  bytes.replace(at, from.size(), to);
  bytes.erase(bytes.find('}') + 1, to.size() - from.size());
  return bytes + std::string(data_bytes, '\0');
}

TEST(NpzArchive, HeadersAreCheckedAgainstTheMemberBeforeReading) {
  TempDir dir;
  const std::string p = dir.path("a.npz");
  // Claims 10^12 values, holds 80 bytes.
  write_npz(p, {{"index.npy", zeros_npy(1000000000000, 80)}}, true);
  NpzArchive archive = NpzArchive::open_file(p);
  ASSERT_EQ(archive.entries().size(), 1u);
  EXPECT_INPUT_ERROR(archive.npy_header("index.npy"), p + ": member 'index.npy'",
                     "truncated data: header says 8000000000000 bytes of values");
  // Honest: the header's count matches the member.
  write_npz(p, {{"index.npy", zeros_npy(10, 80)}}, true);
  NpzArchive honest = NpzArchive::open_file(p);
  EXPECT_EQ(honest.npy_header("index.npy").shape, std::vector<int64_t>{10});
  EXPECT_EQ(npy_integers_from_bytes(honest.read("index.npy"), "m"), std::vector<int64_t>(10, 0));
}

TEST(NpzArchive, MembersOverTheBudgetAreRefusedBeforeInflating) {
  TempDir dir;
  const std::string p = dir.path("big.npz");
  write_npz(p, {{"index.npy", zeros_npy(1 << 20, 8 << 20)}}, true);  // 8 MiB, deflated
  BudgetGuard guard(1 << 20);
  EXPECT_INPUT_ERROR(read_npz(p), p + ": ", "needs 8.0 MiB of memory (its members decompressed)");
  NpzArchive archive = NpzArchive::open_file(p);
  EXPECT_INPUT_ERROR(archive.read("index.npy"), p + ": member 'index.npy'", "memory budget");
}

TEST(ImportBudget, ArraysOfDifferentLengthsAreRefusedFromTheirHeaders) {
  TempDir dir;
  const std::string p = dir.path("hostile_rank0.npz");
  // index.npy: 10^7 values (80 MB of zeros deflated to ~80 kB); the others 10. With a
  // 1 MiB budget, the lengths are refused before anything is inflated (the budget would
  // refuse reading index.npy if it were read first).
  write_npz(p,
            {{"index.npy", zeros_npy(10000000, 80000000)},
             {"target.npy", npy_bytes(std::vector<int64_t>(10, 0), {10})},
             {"prediction.npy", npy_bytes(std::vector<int64_t>(10, 0), {10})}},
            true);
  BudgetGuard guard(1 << 20);
  EXPECT_INPUT_ERROR(read_npz_dump(p), p + ": ",
                     "index, target and prediction have different lengths (10000000, 10, 10)");
}

TEST(ImportBudget, ConsistentDumpsTooLargeForTheBudgetAreRefused) {
  TempDir dir;
  const std::string p = dir.path("big_rank0.npz");
  const int64_t n = 1 << 20;
  write_npz(p,
            {{"index.npy", zeros_npy(n, size_t(n) * 8)},
             {"target.npy", zeros_npy(n, size_t(n) * 8)},
             {"prediction.npy", zeros_npy(n, size_t(n) * 8)}},
            true);
  {
    BudgetGuard guard(16 << 20);
    EXPECT_INPUT_ERROR(read_npz_dump(p), p + ": ",
                       "of memory (its arrays and the records built from them), more than the "
                       "16 MiB memory budget");
  }
  EXPECT_EQ(read_npz_dump(p).records.size(), size_t(n));  // the default budget takes it
}

TEST(IdxBudget, GzipInflatingPastItsHeaderIsRefusedAtTheFirstByte) {
  TempDir dir;
  const std::string p = dir.path("labels-idx1-ubyte.gz");
  // Announces 10 labels; inflates to 32 MiB.
  write_bytes(p, gzip(io_test::be32(0x801) + io_test::be32(10) + std::string(32 << 20, '\0')));
  EXPECT_INPUT_ERROR(read_idx_labels(p), p + ": ",
                     "decompressed data holds more than the 18 bytes its header announces");
  // An honest one reads; one whose header announces more than the budget is refused.
  write_bytes(p, gzip(io_test::be32(0x801) + io_test::be32(3) + std::string("\1\2\3")));
  EXPECT_EQ(read_idx_labels(p), (std::vector<int64_t>{1, 2, 3}));
  write_bytes(p, gzip(io_test::be32(0x801) + io_test::be32(4000000) + std::string(1000, '\0')));
  BudgetGuard guard(1 << 20);
  EXPECT_INPUT_ERROR(read_idx_labels(p), p + ": ", "memory budget");
}

TEST(CsvBudget, TablesAreBoundedBeforeTheyAreBuilt) {
  TempDir dir;
  const std::string p = dir.path("dump_rank0.csv");
  std::string text = "rank,index,target,prediction\n";
  for (int i = 0; i < 2000; ++i) text += "0," + std::to_string(i) + ",0,0\n";
  write_bytes(p, text);
  BudgetGuard guard(64 << 10);  // the text fits, the table of strings does not
  EXPECT_INPUT_ERROR(read_csv(p), p + ": ", "its fields as a table of text");
}

TEST(FileBudget, WholeFileReadsAreBounded) {
  TempDir dir;
  const std::string p = dir.path("x.npy");
  write_bytes(p, std::string(2 << 20, 'x'));
  BudgetGuard guard(1 << 20);
  EXPECT_INPUT_ERROR(read_file_bytes(p), p + ": ", "needs 2.0 MiB of memory (the file's bytes)");
}

}  // namespace
}  // namespace shardlens

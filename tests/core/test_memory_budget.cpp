// Tests for the load budget (core/vocabulary/memory_budget.h) and the readers that honour it:
// hostile files are refused from what they declare, before the data is allocated.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/io/csv.h"
#include "core/io/files.h"
#include "core/io/idx.h"
#include "core/io/json_fields.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/zip_directory.h"
#include "core/runfile/import.h"
#include "core/vocabulary/memory_budget.h"
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

// A JSON document is charged for the tree the parser would build, before it builds it: a few
// bytes of text per value ("{}," is three) become over a hundred bytes each once parsed.
std::string many_empty_objects(size_t count) {
  std::string text = "{\"unknown\": [";
  for (size_t i = 0; i < count; ++i) text += i ? ",{}" : "{}";
  return text + "]}";
}

TEST(JsonBudget, ManySmallValuesAreRefusedBeforeTheTreeIsBuilt) {
  BudgetGuard guard(uint64_t(1) << 20);
  // 100,000 objects are 300 KB of text, far under the 1 MiB budget, and over 10 MB parsed.
  const std::string crowded = many_empty_objects(100000);
  ASSERT_LT(crowded.size(), uint64_t(1) << 20);
  EXPECT_INPUT_ERROR(parse_json(crowded, "meta.json"),
                     "meta.json: ", "values), more than the 1.0 MiB memory budget");
  // A thousand are about 130 KB parsed: accepted, and every one of them is there.
  const nlohmann::json fine = parse_json(many_empty_objects(1000), "meta.json");
  EXPECT_EQ(fine.at("unknown").size(), 1000u);
}

TEST(JsonBudget, StringBytesCountAgainstTheBudget) {
  BudgetGuard guard(uint64_t(1) << 20);
  const std::string long_string = "{\"title\": \"" + std::string(2u << 20, 'x') + "\"}";
  EXPECT_INPUT_ERROR(parse_json(long_string, "scenario.json"),
                     "scenario.json: ", "more than the 1.0 MiB memory budget");
  const std::string short_string = "{\"title\": \"" + std::string(100000, 'x') + "\"}";
  EXPECT_EQ(parse_json(short_string, "scenario.json").at("title").get<std::string>().size(),
            100000u);
}

// A ZIP's directory is charged before libzip lists it: each member costs an entry whatever
// its size. Python's zipfile writes the archives (ZIP64 end records past 65,535 members).
TEST(ZipBudget, ManyMembersAreChargedBeforeTheDirectoryIsListed) {
  TempDir dir;
  ASSERT_EQ(io_test::run_python(dir, R"PY(
import zipfile
for name, count in (("few.npz", 3), ("many.npz", 100000)):
    with zipfile.ZipFile(name, "w") as z:
        for i in range(count):
            z.writestr("a%d.npy" % i, b"")
)PY"),
            0);
  const std::string many = dir.path("many.npz"), few = dir.path("few.npz");
  const std::string bytes = io_test::slurp(many);
  const auto read_at = [&bytes](uint64_t offset, size_t n) {
    return bytes.substr(size_t(offset), n);
  };
  const std::optional<ZipDirectorySize> size = zip_directory_size(read_at, bytes.size());
  ASSERT_TRUE(size);
  EXPECT_EQ(size->members, 100000u);
  EXPECT_GE(size->directory_bytes, 100000u * 46);
  {
    // 100,000 members of nothing are a 12 MB file and about 50 MB listed.
    BudgetGuard guard(uint64_t(16) << 20);
    EXPECT_INPUT_ERROR(NpzArchive::open_file(many), many + ": ",
                       "(the ZIP directory of 100000 members), more than the 16 MiB");
    EXPECT_INPUT_ERROR(NpzArchive::from_bytes(bytes, "dump.npz"),
                       "dump.npz: ", "the ZIP directory of 100000 members");
    EXPECT_EQ(NpzArchive::open_file(few).entries().size(), 3u);
  }
  EXPECT_EQ(NpzArchive::open_file(many).entries().size(), 100000u);
  // No end record: not charged, and libzip's own message stays.
  EXPECT_FALSE(zip_directory_size(read_at, 10));
  const std::string cut = bytes.substr(0, bytes.size() / 2);
  EXPECT_FALSE(zip_directory_size(
      [&cut](uint64_t offset, size_t n) { return cut.substr(size_t(offset), n); }, cut.size()));
}

// Labels are widened to 64-bit integers: the widened array is charged with the file, from
// the header's count, before the file is inflated.
TEST(IdxBudget, LabelsAreChargedAsTheIntegersTheyBecome) {
  TempDir dir;
  const uint32_t count = 4u << 20;  // 4 MiB of labels, 32 MiB once widened
  const std::string idx = io_test::be32(0x801) + io_test::be32(count) + std::string(count, '\1');
  const std::string plain = dir.path("plain-idx1-ubyte"), packed = dir.path("packed-idx1-ubyte.gz");
  write_bytes(plain, idx);
  write_bytes(packed, gzip(idx));
  BudgetGuard guard(uint64_t(16) << 20);
  EXPECT_INPUT_ERROR(read_idx_labels(plain), plain + ": ", "more than the 16 MiB");
  EXPECT_INPUT_ERROR(read_idx_labels(packed), packed + ": ",
                     "(the decompressed data its header announces and the labels read from it)");
  set_load_budget(uint64_t(64) << 20);
  EXPECT_EQ(read_idx_labels(plain).size(), count);
  EXPECT_EQ(read_idx_labels(packed).size(), count);
}

// Rows end at \n, \r\n or a lone \r, as the lexer ends them: all three are counted.
TEST(CsvBudget, CarriageReturnLineEndsAreCountedAsRows) {
  BudgetGuard guard(uint64_t(16) << 20);
  std::string cr_only = "label\r", lf_only = "label\n";
  for (int i = 0; i < 1000000; ++i) {
    cr_only += "0\r";
    lf_only += "0\n";
  }
  EXPECT_INPUT_ERROR(parse_csv(lf_only, "lf.csv"), "lf.csv: ", "more than the 16 MiB");
  EXPECT_INPUT_ERROR(parse_csv(cr_only, "cr.csv"), "cr.csv: ", "more than the 16 MiB");
  set_load_budget(uint64_t(256) << 20);
  EXPECT_EQ(parse_csv(cr_only, "cr.csv").rows.size(), parse_csv(lf_only, "lf.csv").rows.size());
}

}  // namespace
}  // namespace shardlens

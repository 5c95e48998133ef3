// Tests for core/io/npz: .npz archives read and written through libzip, checked by numpy.
#include <gtest/gtest.h>
#include <zip.h>

#include <filesystem>
#include <string>

#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "test_io_util.h"
#include "tests/common/test_rows.h"

namespace shardlens {
namespace {

using io_test::slurp;
using io_test::TempDir;
using io_test::write_bytes;

using Members = std::vector<std::pair<std::string, std::string>>;

Members sample_members() {
  return {{"target.npy", npy_bytes(std::vector<int64_t>{0, 1, 2, 1}, {4})},
          {"rank0/prediction.npy", npy_bytes(std::vector<int32_t>{0, 1, 1, 1}, {4})},
          {"matrix.npy", npy_bytes(std::vector<int64_t>(9, 3), {3, 3})},
          {"meta.json", R"({"format": 1, "classes": ["a", "b", "c"]})"}};
}

// Builds a ZIP with raw libzip calls, for members our writer refuses to make.
void make_zip(const std::string& path, const Members& members, int32_t method = ZIP_CM_STORE) {
  int code = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  ASSERT_NE(za, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = zip_file_add(za, name.c_str(), src, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(i, 0);
    ASSERT_EQ(zip_set_file_compression(za, zip_uint64_t(i), method, 0), 0);
  }
  ASSERT_EQ(zip_close(za), 0);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

TEST(NpzRoundTrip, StoredAndCompressed) {
  TempDir dir;
  for (const bool compress : {false, true}) {
    const std::string path = dir.path(compress ? "c.npz" : "s.npz");
    write_npz(path, sample_members(), compress);
    const NpzMembers got = read_npz(path);
    ASSERT_EQ(got.size(), 4u);
    for (const auto& [name, bytes] : sample_members()) EXPECT_EQ(got.at(name), bytes) << name;
    EXPECT_EQ(npy_integers_from_bytes(got.at("target.npy"), "t"),
              (std::vector<int64_t>{0, 1, 2, 1}));
    EXPECT_EQ(npz_members_from_bytes(slurp(path), "mem"), got);
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.dir()), {}), 2)
      << "temporary files left behind";
}

TEST(NpzRoundTrip, EmptyArchive) {
  TempDir dir;
  write_npz(dir.path("e.npz"), {});
  EXPECT_TRUE(read_npz(dir.path("e.npz")).empty());
}

TEST(NpzWriter, RejectsBadNamesAndReportsWriteFailures) {
  TempDir dir;
  EXPECT_THROW(write_npz(dir.path("x.npz"), {{"notes.txt", "x"}}), std::invalid_argument);
  EXPECT_THROW(write_npz(dir.path("x.npz"), {{".npy", "x"}}), std::invalid_argument);
  EXPECT_THROW(write_npz(dir.path("x.npz"), {{"a.npy", "x"}, {"a.npy", "y"}}),
               std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir.path("x.npz")));
  const std::string missing = dir.path("nodir/x.npz");
  EXPECT_INPUT_ERROR(write_npz(missing, sample_members()), missing, "cannot write");
}

TEST(NpzNames, AcceptsArraysAndMetaOnly) {
  EXPECT_TRUE(is_npz_member_name("a.npy"));
  EXPECT_TRUE(is_npz_member_name("rank3/target.npy"));
  EXPECT_TRUE(is_npz_member_name("meta.json"));
  EXPECT_FALSE(is_npz_member_name("other.json"));
  EXPECT_FALSE(is_npz_member_name("a.npy.txt"));
  EXPECT_FALSE(is_npz_member_name("dir/"));
  EXPECT_FALSE(is_npz_member_name("\xff.npy"));
}

TEST(NpzReader, RejectsMissingEmptyAndNonZipFiles) {
  TempDir dir;
  const std::string p = dir.path("bad.npz");
  EXPECT_INPUT_ERROR(read_npz(p), p, "cannot open");
  write_bytes(p, "");
  EXPECT_INPUT_ERROR(read_npz(p), p, "empty file");
  write_bytes(p, npy_bytes(std::vector<int64_t>{1}, {1}));  // An .npy renamed to .npz.
  EXPECT_INPUT_ERROR(read_npz(p), p, "not a ZIP archive");
  EXPECT_INPUT_ERROR(npz_members_from_bytes("", "m"), "m", "empty file");
  EXPECT_INPUT_ERROR(npz_members_from_bytes("garbage", "m"), "m", "not a ZIP archive");
}

// An archive cut short, one row per place of the cut (bytes kept of the whole file).
struct CutRow {
  std::string name;
  size_t (*keep)(size_t whole);
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const CutRow& row, std::ostream* os) {
  *os << row.name;
}

class TruncatedNpz : public ::testing::TestWithParam<CutRow> {};

TEST_P(TruncatedNpz, IsRejected) {
  TempDir dir;
  write_npz(dir.path("ok.npz"), sample_members());
  const std::string whole = slurp(dir.path("ok.npz"));
  const std::string p = dir.path("cut.npz");
  const size_t keep = GetParam().keep(whole.size());
  write_bytes(p, whole.substr(0, keep));
  SCOPED_TRACE("kept " + std::to_string(keep) + " bytes");
  EXPECT_INPUT_ERROR(read_npz(p), p, "");
  EXPECT_INPUT_ERROR(npz_members_from_bytes(whole.substr(0, keep), "m"), "m", "");
}

INSTANTIATE_TEST_SUITE_P(
    NpzReader, TruncatedNpz,
    ::testing::Values(CutRow{"Half", [](size_t whole) { return whole / 2; }},
                      CutRow{"AllButTheLastByte", [](size_t whole) { return whole - 1; }},
                      CutRow{"ThirtyBytes", [](size_t) { return size_t(30); }}),
    shardlens::test::NamedRow());

TEST(NpzReader, RejectsUnexpectedMembersAndDuplicates) {
  TempDir dir;
  const std::string p = dir.path("x.npz");
  make_zip(p, {{"a.npy", npy_bytes(std::vector<int64_t>{1}, {1})}, {"readme.txt", "hi"}});
  EXPECT_INPUT_ERROR(read_npz(p), p, "member 'readme.txt': unexpected member");
  make_zip(p, {{"a.npy", "1"}, {"b.npy", "2"}});
  std::string bytes = slurp(p);
  replace_all(bytes, "b.npy", "a.npy");
  write_bytes(p, bytes);
  EXPECT_INPUT_ERROR(read_npz(p), p, "duplicate member names");
}

TEST(NpzReader, RejectsCorruptDataAndLyingSizes) {
  TempDir dir;
  const std::string p = dir.path("x.npz");
  const std::string payload = npy_bytes(std::vector<int64_t>(100, 5), {100});
  write_npz(p, {{"a.npy", payload}});
  const std::string good = slurp(p);
  const size_t data_at = good.find("\x93NUMPY");
  ASSERT_NE(data_at, std::string::npos);
  std::string flipped = good;
  flipped[data_at + payload.size() - 1] ^= 0x55;  // Last array byte: CRC no longer matches.
  write_bytes(p, flipped);
  EXPECT_INPUT_ERROR(read_npz(p), p, "member 'a.npy': corrupt data (CRC error)");

  // The directory claims 2 GB uncompressed for a stored 900-byte member. Local and central
  // headers disagreeing is caught by libzip; both lying alike must be caught before we
  // allocate what they claim.
  const std::string two_gb("\xff\xff\xff\x7f", 4);
  const size_t central = good.find("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  std::string lying = good;
  lying.replace(central + 24, 4, two_gb);
  write_bytes(p, lying);
  EXPECT_INPUT_ERROR(read_npz(p), p, "corrupt ZIP archive");
  lying.replace(22, 4, two_gb);  // Uncompressed size in the local header too.
  write_bytes(p, lying);
  EXPECT_INPUT_ERROR(read_npz(p), p, "member 'a.npy': implausible size: 2147483647 bytes");

  write_npz(p, {{"a.npy", payload}, {"b.npy", payload}});
  EXPECT_INPUT_ERROR(read_npz(p, payload.size() + 10), p, "more than the");
  EXPECT_EQ(read_npz(p, 2 * payload.size()).size(), 2u);
}

TEST(NpzReader, RejectsUnsupportedCompressionAndEncryption) {
  TempDir dir;
  const std::string p = dir.path("x.npz");
  if (zip_compression_method_supported(ZIP_CM_BZIP2, 1)) {
    make_zip(p, {{"a.npy", std::string(1000, 'a')}}, ZIP_CM_BZIP2);
    EXPECT_INPUT_ERROR(read_npz(p), p, "compression method 12 is not supported");
  }
  if (zip_encryption_method_supported(ZIP_EM_AES_256, 1)) {
    int code = 0;
    zip_t* za = zip_open(p.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    ASSERT_NE(za, nullptr);
    const std::string body = "secret";
    const zip_int64_t i =
        zip_file_add(za, "a.npy", zip_source_buffer(za, body.data(), body.size(), 0), 0);
    ASSERT_EQ(zip_file_set_encryption(za, zip_uint64_t(i), ZIP_EM_AES_256, "pw"), 0);
    ASSERT_EQ(zip_close(za), 0);
    EXPECT_INPUT_ERROR(read_npz(p), p, "encrypted");
  }
}

TEST(NpzReader, SurvivesRandomMutations) {
  TempDir dir;
  for (const bool compress : {false, true}) {
    write_npz(dir.path("seed.npz"), sample_members(), compress);
    io_test::survive_mutations(slurp(dir.path("seed.npz")), 1500, [](const std::string& b) {
      npz_members_from_bytes(b, "m", size_t(1) << 20);
    });
  }
}

// numpy.savez / savez_compressed output must read back, and numpy must load ours.
TEST(NpzOracle, ReadsNumpyArchivesAndNumpyLoadsOurs) {
  SKIP_WITHOUT_NUMPY();
  TempDir dir;
  write_npz(dir.path("ours_stored.npz"), sample_members());
  write_npz(dir.path("ours_deflated.npz"), sample_members(), true);
  write_npz(dir.path("ours_empty.npz"), {});
  ASSERT_EQ(io_test::run_python(dir, R"PY(
import numpy as np, json, zipfile
for name in ['ours_stored.npz', 'ours_deflated.npz']:
    z = np.load(name)
    assert sorted(z.files) == ['matrix', 'meta.json', 'rank0/prediction', 'target'], z.files
    assert z['target'].tolist() == [0, 1, 2, 1] and z['target'].dtype == np.int64
    assert z['rank0/prediction'].dtype == np.int32
    assert z['matrix'].shape == (3, 3) and int(z['matrix'].sum()) == 27
    assert json.loads(z['meta.json'])['classes'] == ['a', 'b', 'c']
assert len(np.load('ours_empty.npz').files) == 0
np.savez('np_stored.npz', target=np.array([3, 1, 2], dtype='>i4'), m=np.eye(2, dtype=np.int64))
np.savez_compressed('np_deflated.npz', target=np.arange(10000) % 7)
with zipfile.ZipFile('np_pickle.npz', 'w') as z:
    z.writestr('x.pkl', b'not an array')
)PY"),
            0);
  const NpzMembers stored = read_npz(dir.path("np_stored.npz"));
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(npy_integers_from_bytes(stored.at("target.npy"), "t"), (std::vector<int64_t>{3, 1, 2}));
  std::vector<int64_t> shape;
  EXPECT_EQ(npy_integers_from_bytes(stored.at("m.npy"), "m", &shape),
            (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 2}));
  const auto big =
      npy_integers_from_bytes(read_npz(dir.path("np_deflated.npz")).at("target.npy"), "t");
  ASSERT_EQ(big.size(), 10000u);
  EXPECT_EQ(big[9999], 9999 % 7);
  EXPECT_INPUT_ERROR(read_npz(dir.path("np_pickle.npz")), dir.path("np_pickle.npz"),
                     "member 'x.pkl': unexpected member");
}

}  // namespace
}  // namespace shardlens

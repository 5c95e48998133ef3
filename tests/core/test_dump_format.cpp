// The C++ side of the dump format's schema (shardlens/dump_format.h, generated from
// integrations/python/shardlens_recorder/dump_format.json): the version a dump records, the
// shapes the schema gives each array, and the minimum of each settings_json key. The Python
// side writes every field and reads each back through this reader in
// tests/python/test_dump_format.py.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>

#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/runfile/import.h"
#include "core/vocabulary/types.h"
#include "shardlens/dump_format.h"

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

std::string bytes_of(const std::string& text) {
  std::vector<uint8_t> b(text.begin(), text.end());
  return npy_bytes(b, {int64_t(b.size())});
}

// One rank's three records, with `extra` members.
Members dump(const Members& extra = {}) {
  Members m = {{"index.npy", ints({0, 1, 2})},
               {"target.npy", ints({0, 1, 1})},
               {"prediction.npy", ints({0, 1, 0})},
               {"rank.npy", scalar(0)}};
  m.insert(m.end(), extra.begin(), extra.end());
  return m;
}

class DumpFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("shardlens_dump_format_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  std::string write(const std::string& name, const Members& members) const {
    const std::string path = (m_dir / name).string();
    write_npz(path, members);
    return path;
  }
  std::string error_of(const std::string& path) const {
    try {
      read_npz_dump(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  fs::path m_dir;
};

}  // namespace

TEST_F(DumpFormat, ANewerVersionIsRefusedNamingTheFileAndBothVersions) {
  const int newer = dump_format::kVersion + 1;
  const std::string path = write("newer_rank0.npz", dump({{"format_version.npy", scalar(newer)}}));
  EXPECT_EQ(error_of(path), path + ": dump format version " + std::to_string(newer) +
                                " is newer than this ShardLens reads (" +
                                std::to_string(dump_format::kVersion) + "); update ShardLens");
  // Arrays read whole (a .pt) are refused the same way, before their shapes are checked.
  DumpArrays arrays;
  arrays["format_version"] = DumpArray{{}, true, {newer}, {}};
  try {
    dump_from_arrays(arrays, "x.pt");
    FAIL() << "a newer dump was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.pt: dump format version"), std::string::npos)
        << e.what();
  }
}

TEST_F(DumpFormat, TheCurrentVersionAndNoVersionAreRead) {
  EXPECT_EQ(read_npz_dump(write("now_rank0.npz",
                                dump({{"format_version.npy", scalar(dump_format::kVersion)}})))
                .records.size(),
            3u);
  EXPECT_EQ(read_npz_dump(write("old_rank0.npz", dump())).records.size(), 3u);
  EXPECT_NE(error_of(write("zero_rank0.npz", dump({{"format_version.npy", scalar(0)}})))
                .find("'format_version' = 0 is not a format version"),
            std::string::npos);
}

TEST_F(DumpFormat, ArraysAreCheckedByTheShapeTheSchemaGives) {
  EXPECT_NE(error_of(write("flags_rank0.npz", dump({{"flags.npy", ints({0, 1})}})))
                .find("'flags' has 2 entries for 3 records"),
            std::string::npos);
  EXPECT_NE(error_of(write("epoch_rank0.npz", dump({{"epoch.npy", ints({1, 2})}})))
                .find("'epoch' must be a single number"),
            std::string::npos);
  EXPECT_NE(error_of(write("matrix_rank0.npz", dump({{"matrix.npy", ints({1, 2, 3})}})))
                .find("'matrix' is not a square C x C matrix"),
            std::string::npos);
  // Every name the schema lists for an array reads as that array.
  const RankDump d = read_npz_dump(write("labels_rank0.npz", {{"indices.npy", ints({4, 5})},
                                                              {"labels.npy", ints({1, 0})},
                                                              {"preds.npy", ints({1, 1})},
                                                              {"ranks.npy", scalar(0)}}));
  ASSERT_EQ(d.records.size(), 2u);
  EXPECT_EQ(d.records[0].index, 4);
  EXPECT_EQ(d.records[1].target, 0);
  EXPECT_EQ(d.records[1].prediction, 1);
}

TEST_F(DumpFormat, ASettingBelowItsMinimumIsNamed) {
  const std::string batch =
      write("batch_rank0.npz", dump({{"settings_json.npy", bytes_of(R"({"batch_size": 0})")}}));
  EXPECT_NE(error_of(batch).find(batch + ": settings_json: 'batch_size' must be at least 1 (is 0)"),
            std::string::npos)
      << error_of(batch);
  const std::string epoch =
      write("epoch_rank0.npz", dump({{"settings_json.npy", bytes_of(R"({"sampler_epoch": -1})")}}));
  EXPECT_NE(error_of(epoch).find("'sampler_epoch' must be at least 0 (is -1)"), std::string::npos)
      << error_of(epoch);
  // Without a minimum any integer is read: a seed may be negative.
  const RankDump d = read_npz_dump(
      write("seed_rank0.npz", dump({{"settings_json.npy", bytes_of(R"({"seed": -3})")}})));
  ASSERT_TRUE(d.settings.has_value());
  EXPECT_EQ(d.settings->seed.value_or(0), -3);
}

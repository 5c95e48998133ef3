// Tests for core/io/files: whole-file reads, gzip detection, atomic writes, class names.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "core/io/files.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

using io_test::gzip;
using io_test::slurp;
using io_test::TempDir;
using io_test::write_bytes;

size_t count_entries(const std::filesystem::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(FilesRead, ReadsWholeFile) {
  TempDir dir;
  const std::string data("a\0b\xff", 4);
  write_bytes(dir.path("x.bin"), data);
  EXPECT_EQ(read_file_bytes(dir.path("x.bin")), data);
}

TEST(FilesRead, RejectsMissingEmptyDirectoryAndOversized) {
  TempDir dir;
  EXPECT_INPUT_ERROR(read_file_bytes(dir.path("nope")), dir.path("nope"), "cannot open (No such");
  write_bytes(dir.path("empty"), "");
  EXPECT_INPUT_ERROR(read_file_bytes(dir.path("empty")), dir.path("empty"), "empty file");
  EXPECT_INPUT_ERROR(read_file_bytes(dir.dir().string()), dir.dir().string(), "is a directory");
  write_bytes(dir.path("big"), std::string(100, 'x'));
  EXPECT_INPUT_ERROR(read_file_bytes(dir.path("big"), 99), dir.path("big"), "99-byte limit");
  EXPECT_EQ(read_file_bytes(dir.path("big"), 100).size(), 100u);
}

TEST(FilesGunzip, PassesPlainDataThrough) {
  EXPECT_EQ(maybe_gunzip("plain text", "x"), "plain text");
  EXPECT_EQ(maybe_gunzip("\x1f", "x"), "\x1f");  // Too short to be gzip.
}

TEST(FilesGunzip, DecompressesSingleAndConcatenatedMembers) {
  std::string big(300000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = char(i * 7 % 251);
  EXPECT_EQ(maybe_gunzip(gzip(big), "x"), big);
  EXPECT_EQ(maybe_gunzip(gzip("hello ") + gzip("world"), "x"), "hello world");
}

TEST(FilesGunzip, RejectsTruncatedCorruptTrailingAndBombs) {
  const std::string gz = gzip(std::string(100000, 'q'));
  EXPECT_INPUT_ERROR(maybe_gunzip(gz.substr(0, gz.size() / 2), "f.gz"), "f.gz", "truncated gzip");
  EXPECT_INPUT_ERROR(maybe_gunzip(gz.substr(0, gz.size() - 3), "f.gz"), "f.gz", "truncated gzip");
  std::string corrupt = gz;
  corrupt[3] = char(0xE0);  // Reserved flag bits set in the gzip header.
  EXPECT_INPUT_ERROR(maybe_gunzip(corrupt, "f.gz"), "f.gz", "corrupt gzip data");
  EXPECT_INPUT_ERROR(maybe_gunzip(gz + "junk", "f.gz"), "f.gz", "4 bytes of trailing data");
  // 100 kB of 'q' compresses to ~100 bytes; a 1000-byte limit must stop it early.
  EXPECT_INPUT_ERROR(maybe_gunzip(gz, "f.gz", 1000), "f.gz", "exceeds the 1000-byte limit");
}

TEST(FilesGunzip, SurvivesRandomMutations) {
  io_test::survive_mutations(gzip(std::string(5000, 'z') + "tail"), 2000,
                             [](const std::string& b) { maybe_gunzip(b, "m", 1 << 20); });
}

TEST(FilesAtomic, WritesReplacesAndLeavesNoTemporaries) {
  TempDir dir;
  const std::string path = dir.path("out.bin");
  write_file_atomic(path, "first");
  EXPECT_EQ(slurp(path), "first");
  write_file_atomic(path, std::string("second\0x", 8));
  EXPECT_EQ(slurp(path), std::string("second\0x", 8));
  EXPECT_EQ(count_entries(dir.dir()), 1u);
  // The umask, not mkstemp's 0600, decides the mode.
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST(FilesAtomicSet, CommitReplacesEveryFileAtOnce) {
  TempDir dir;
  write_file_atomic(dir.path("a.csv"), "old a");
  {
    AtomicFileSet files;
    files.add(dir.path("a.csv"), "new a");
    files.add(dir.path("b.csv"), "new b");
    // Before commit(): the targets are as they were (b does not exist yet).
    EXPECT_EQ(slurp(dir.path("a.csv")), "old a");
    EXPECT_FALSE(std::filesystem::exists(dir.path("b.csv")));
    files.commit();
  }
  EXPECT_EQ(slurp(dir.path("a.csv")), "new a");
  EXPECT_EQ(slurp(dir.path("b.csv")), "new b");
  EXPECT_EQ(count_entries(dir.dir()), 2u);  // no temporary file left
}

TEST(FilesAtomicSet, AFailedAddLeavesEveryTargetAsItWas) {
  TempDir dir;
  write_file_atomic(dir.path("a.csv"), "old a");
  const std::string missing = dir.path("no/such/dir/c.csv");
  {
    AtomicFileSet files;
    files.add(dir.path("a.csv"), "new a");
    files.add(dir.path("b.csv"), "new b");
    EXPECT_INPUT_ERROR(files.add(missing, "c"), missing, "cannot write");
  }  // never committed
  EXPECT_EQ(slurp(dir.path("a.csv")), "old a");
  EXPECT_EQ(count_entries(dir.dir()), 1u);  // b never appeared, the temporaries are gone
}

TEST(FilesAtomic, FailureNamesPathAndKeepsOldFile) {
  TempDir dir;
  const std::string missing = dir.path("no/such/dir/out.bin");
  EXPECT_INPUT_ERROR(write_file_atomic(missing, "x"), missing, "cannot write");

  const std::string path = dir.path("keep.bin");
  write_file_atomic(path, "old");
  EXPECT_THROW(write_file_atomic_with(path,
                                      [](const std::string& tmp) {
                                        write_bytes(tmp, "half");
                                        throw std::runtime_error("crash mid-write");
                                      }),
               std::runtime_error);
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(count_entries(dir.dir()), 1u);  // Only keep.bin: no temporary left behind.
}

TEST(FilesAtomic, WithCallbackWritesThroughTemporary) {
  TempDir dir;
  const std::string path = dir.path("cb.bin");
  std::string seen_tmp;
  write_file_atomic_with(path, [&](const std::string& tmp) {
    seen_tmp = tmp;
    write_bytes(tmp, "via callback");
  });
  EXPECT_EQ(slurp(path), "via callback");
  EXPECT_EQ(seen_tmp.rfind(path + ".tmp-", 0), 0u);
  EXPECT_FALSE(std::filesystem::exists(seen_tmp));
}

TEST(FilesUtf8, AcceptsValidAndFindsInvalid) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("T-shirt/top"));
  EXPECT_TRUE(is_valid_utf8("Pullover \xC3\xA9\xE2\x82\xAC\xF0\x9F\x91\x95"));  // é € 👕
  EXPECT_EQ(invalid_utf8_offset("ab\xFF"), 2u);
  EXPECT_EQ(invalid_utf8_offset("\xC0\xAF"), 0u);          // Overlong '/'.
  EXPECT_EQ(invalid_utf8_offset("\xE0\x80\xAF"), 0u);      // Overlong, 3 bytes.
  EXPECT_EQ(invalid_utf8_offset("x\xED\xA0\x80"), 1u);     // UTF-16 surrogate.
  EXPECT_EQ(invalid_utf8_offset("\xF4\x90\x80\x80"), 0u);  // Above U+10FFFF.
  EXPECT_EQ(invalid_utf8_offset("ok\xE2\x82"), 2u);        // Cut-off sequence.
  EXPECT_EQ(invalid_utf8_offset("\x80"), 0u);              // Lone continuation byte.
}

TEST(FilesClassNames, ReadsNamesSkippingBlanksBomAndCrlf) {
  TempDir dir;
  write_bytes(dir.path("names.txt"),
              "\xEF\xBB\xBFT-shirt/top\r\n  Trouser \r\n\r\n\nCaf\xC3\xA9\n   \nBag");
  const auto names = read_class_names(dir.path("names.txt"));
  EXPECT_EQ(names, (std::vector<std::string>{"T-shirt/top", "Trouser", "Caf\xC3\xA9", "Bag"}));
}

TEST(FilesClassNames, RejectsBadUtf8ControlCharsBlankAndEmpty) {
  TempDir dir;
  const std::string p = dir.path("names.txt");
  write_bytes(p, "cat\ndog\nb\xE9te\n");  // Latin-1, not UTF-8.
  EXPECT_INPUT_ERROR(read_class_names(p), p, "line 3: not valid UTF-8");
  write_bytes(p, "cat\nd\x01og\n");
  EXPECT_INPUT_ERROR(read_class_names(p), p, "line 2: control character");
  write_bytes(p, "\n \n\r\n");
  EXPECT_INPUT_ERROR(read_class_names(p), p, "no class names");
  write_bytes(p, "");
  EXPECT_INPUT_ERROR(read_class_names(p), p, "empty file");
  // A name is a label, not a payload: 100,000 characters are refused with the line named.
  write_bytes(p, "cat\n" + std::string(100000, 'x') + "\n");
  EXPECT_INPUT_ERROR(read_class_names(p), p, "line 2: class name of 100000 bytes");
  write_bytes(p, "cat\n" + std::string(kMaxClassNameBytes, 'x') + "\n");
  EXPECT_EQ(read_class_names(p)[1].size(), kMaxClassNameBytes);
}

}  // namespace
}  // namespace shardlens

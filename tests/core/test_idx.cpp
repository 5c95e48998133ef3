// Tests for core/io/idx: MNIST-format label and image files, real and malformed.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>

#include "core/io/idx.h"
#include "test_io_util.h"

namespace shardlens {
namespace {

using io_test::be32;
using io_test::gzip;
using io_test::TempDir;
using io_test::write_bytes;

const std::string kFashion = "/usr/share/datasets/fashion-mnist/";

std::string label_file(const std::string& labels) {
  return be32(0x801) + be32(uint32_t(labels.size())) + labels;
}

std::string image_file(uint32_t count, uint32_t rows, uint32_t cols) {
  std::string pixels(size_t(count) * rows * cols, '\0');
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = char(i % 256);
  return be32(0x803) + be32(count) + be32(rows) + be32(cols) + pixels;
}

TEST(IdxReal, ReadsFashionMnistTestLabels) {
  const std::string path = kFashion + "t10k-labels-idx1-ubyte.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "Fashion-MNIST not installed at " << path;
  const auto labels = read_idx_labels(path);
  ASSERT_EQ(labels.size(), 10000u);
  std::array<int, 10> per_class{};
  for (int64_t l : labels) {
    ASSERT_GE(l, 0);
    ASSERT_LT(l, 10);
    ++per_class[size_t(l)];
  }
  for (int n : per_class) EXPECT_EQ(n, 1000);
}

TEST(IdxReal, ReadsFashionMnistTestImages) {
  const std::string path = kFashion + "t10k-images-idx3-ubyte.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "Fashion-MNIST not installed at " << path;
  const IdxImages images = read_idx_images(path);
  EXPECT_EQ(images.count, 10000);
  EXPECT_EQ(images.rows, 28);
  EXPECT_EQ(images.cols, 28);
  EXPECT_EQ(images.pixels.size(), 10000u * 28 * 28);
}

TEST(IdxLabels, ReadsPlainAndGzippedAlike) {
  TempDir dir;
  const std::string body = label_file(std::string("\x00\x09\x03\xff", 4));
  write_bytes(dir.path("plain"), body);
  write_bytes(dir.path("zipped.idx"), gzip(body));  // Name says nothing; content decides.
  const std::vector<int64_t> want{0, 9, 3, 255};
  EXPECT_EQ(read_idx_labels(dir.path("plain")), want);
  EXPECT_EQ(read_idx_labels(dir.path("zipped.idx")), want);
}

TEST(IdxLabels, RejectsBadMagicAndWrongKind) {
  TempDir dir;
  const std::string p = dir.path("labels");
  write_bytes(p, "PK\x03\x04" + be32(1) + "x");
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "not an IDX file (magic 0x504B0304");
  write_bytes(p, image_file(1, 2, 2));  // An image file passed as labels.
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "IDX file has 3 dimensions");
  write_bytes(p, be32(0x0D01) + be32(1) + std::string(4, '\0'));
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "element type float32");
}

TEST(IdxLabels, RejectsTruncatedTrailingEmptyAndHugeCounts) {
  TempDir dir;
  const std::string p = dir.path("labels");
  write_bytes(p, be32(0x801) + be32(10) + "abc");
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "truncated data: header says 10 labels");
  write_bytes(p, label_file("abc") + "xy");
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "2 bytes of trailing data after 3 labels");
  write_bytes(p, "");
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "empty file");
  write_bytes(p, be32(0x801) + "\x00\x00");
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "truncated IDX header");
  write_bytes(p, be32(0x801) + be32(0));
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "holds no labels");
  // A 4-billion count in a 12-byte file must be refused before anything is allocated.
  write_bytes(p, be32(0x801) + be32(0xFFFFFFFF) + "abcd");
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "header says 4294967295 labels");
  const std::string gz = gzip(label_file(std::string(5000, '\x01')));
  write_bytes(p, gz.substr(0, gz.size() - 10));
  EXPECT_INPUT_ERROR(read_idx_labels(p), p, "truncated gzip data");
  EXPECT_INPUT_ERROR(read_idx_labels(dir.path("missing")), dir.path("missing"), "cannot open");
}

TEST(IdxImages, ReadsSmallImageFile) {
  TempDir dir;
  write_bytes(dir.path("img"), gzip(image_file(3, 2, 4)));
  const IdxImages img = read_idx_images(dir.path("img"));
  EXPECT_EQ(img.count, 3);
  EXPECT_EQ(img.rows, 2);
  EXPECT_EQ(img.cols, 4);
  ASSERT_EQ(img.pixels.size(), 24u);
  EXPECT_EQ(img.pixels[23], 23);
}

TEST(IdxImages, RejectsMalformedFiles) {
  TempDir dir;
  const std::string p = dir.path("img");
  write_bytes(p, label_file("abc"));
  EXPECT_INPUT_ERROR(read_idx_images(p), p, "IDX file has 1 dimensions");
  write_bytes(p, image_file(2, 3, 3).substr(0, 16 + 10));
  EXPECT_INPUT_ERROR(read_idx_images(p), p, "truncated data: header says 2 images of 3 x 3");
  write_bytes(p, image_file(2, 3, 3) + "!");
  EXPECT_INPUT_ERROR(read_idx_images(p), p, "1 bytes of trailing data");
  write_bytes(p, be32(0x803) + be32(1) + be32(0) + be32(5));
  EXPECT_INPUT_ERROR(read_idx_images(p), p, "zero dimension");
  write_bytes(p, be32(0x803) + be32(1) + be32(70000) + be32(5) + "x");
  EXPECT_INPUT_ERROR(read_idx_images(p), p, "implausible image size 70000 x 5");
  // count * rows * cols near 2^64 must not overflow into a small number.
  write_bytes(p, be32(0x803) + be32(0xFFFFFFFF) + be32(65536) + be32(65536) + "x");
  EXPECT_INPUT_ERROR(read_idx_images(p), p, "truncated data");
  write_bytes(p, be32(0x803) + be32(1) + be32(2));
  EXPECT_INPUT_ERROR(read_idx_images(p), p, "truncated IDX header");
}

}  // namespace
}  // namespace shardlens

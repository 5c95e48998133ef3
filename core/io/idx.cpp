#include "core/io/idx.h"

#include <algorithm>
#include <cstdio>

#include "core/io/detail.h"
#include "core/io/files.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"

namespace shardlens {
namespace {

using io_detail::fail;
using io_detail::load_be32;

// The only element type of the IDX files read here (unsigned bytes); images are refused past
// kMaxImageSide rows or columns (core/vocabulary/limits.h).
constexpr uint8_t kUnsignedByte = 0x08;

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

const char* idx_type_name(uint8_t code) {
  switch (code) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return "unknown";
  }
}

// Loads the whole (decompressed) file and checks the 4-byte magic: two zero bytes, the
// element type, and the number of dimensions. Returns the bytes. A gzip file is inflated
// twice over its header: first the header alone, then exactly as many bytes as it
// announces (checked against the load budget), so a small file that inflates to gigabytes
// is refused at the first byte past what its header says. `held_per_byte`: bytes the caller
// will hold for each payload byte besides these (8 where labels widen to int64, 1 where
// pixels are copied), charged with them before anything is inflated or widened: 200 million
// labels in a 200 KB gzip took 2.3 GB before their count was weighed.
std::string load_idx(const std::string& path, uint8_t want_dims, const char* what,
                     uint64_t held_per_byte) {
  const auto charge = [&](uint64_t file_bytes, uint64_t payload_bytes, const char* whose) {
    check_load_budget(path, file_bytes + payload_bytes * held_per_byte,
                      std::string(whose) + " and the " + what + " read from it");
  };
  std::string data = read_file_bytes(path);
  if (is_gzip(data)) {
    const size_t header_bytes = 4u + 4u * want_dims;
    std::string head = gunzip(data, path, header_bytes, GunzipLimit::kPrefix);
    // Images larger than kMaxImageSide per side are refused from the header below.
    const uint32_t want_magic = (uint32_t(kUnsignedByte) << 8) | want_dims;
    const bool sane = head.size() == header_bytes && load_be32(head, 0) == want_magic &&
                      (want_dims != 3 || (load_be32(head, 8) <= kMaxImageSide &&
                                          load_be32(head, 12) <= kMaxImageSide));
    if (sane) {
      // count < 2^32 and rows * cols <= 2^32: the product fits.
      const uint64_t sides =
          want_dims == 3 ? uint64_t(load_be32(head, 8)) * load_be32(head, 12) : 1;
      const uint64_t total = header_bytes + uint64_t(load_be32(head, 4)) * sides;
      charge(total, total - header_bytes, "the decompressed data its header announces");
      data = gunzip(data, path, size_t(total), GunzipLimit::kTrailing);
    } else {
      data = std::move(head);  // the checks below say what is wrong with the header
    }
  }
  const size_t header_bytes = 4u + 4u * want_dims;
  if (data.size() < 4)
    fail(path, "truncated IDX header: " + std::to_string(data.size()) + " bytes");
  const uint32_t magic = load_be32(data, 0);
  const uint8_t type = uint8_t(magic >> 8);
  const uint8_t dims = uint8_t(magic);
  const uint32_t want_magic = (uint32_t(kUnsignedByte) << 8) | want_dims;
  if ((magic >> 16) != 0)
    fail(path, "not an IDX file (magic " + hex32(magic) + ", expected " + hex32(want_magic) + ")");
  if (type != kUnsignedByte)
    fail(path, std::string("IDX element type ") + idx_type_name(type) + " (" + hex32(magic) +
                   ") is not supported; " + what + " must be unsigned bytes (" + hex32(want_magic) +
                   ")");
  if (dims != want_dims)
    fail(path, "IDX file has " + std::to_string(dims) + " dimensions (magic " + hex32(magic) +
                   "); " + what + " need " + std::to_string(want_dims) + " (" + hex32(want_magic) +
                   ")");
  // Only now is the header length known to be right for this kind of file.
  if (data.size() < header_bytes)
    fail(path, "truncated IDX header: " + std::to_string(data.size()) + " bytes, need " +
                   std::to_string(header_bytes));
  charge(data.size(), data.size() - header_bytes, "the file's bytes");
  return data;
}

// The payload must be exactly what the header announces: less is a truncated download,
// more usually means two files were concatenated or the header is wrong.
void check_payload(const std::string& path, const std::string& data, size_t header_bytes,
                   uint64_t expected, const std::string& claim) {
  const uint64_t actual = data.size() - header_bytes;
  if (actual < expected)
    fail(path, "truncated data: header says " + claim + " (" + std::to_string(expected) +
                   " bytes), file has " + std::to_string(actual) + " bytes");
  if (actual > expected)
    fail(path, std::to_string(actual - expected) + " bytes of trailing data after " + claim);
}

}  // namespace

std::vector<int64_t> read_idx_labels(const std::string& path) {
  const std::string data = load_idx(path, 1, "labels", sizeof(int64_t));
  const uint32_t count = load_be32(data, 4);
  if (count == 0) fail(path, "IDX label file holds no labels");
  check_payload(path, data, 8, count, std::to_string(count) + " labels");
  std::vector<int64_t> labels(count);  // Size just verified against the file.
  for (uint32_t i = 0; i < count; ++i) labels[i] = uint8_t(data[8 + i]);
  return labels;
}

IdxImages read_idx_images(const std::string& path) {
  const std::string data = load_idx(path, 3, "images", 1);
  const uint32_t count = load_be32(data, 4);
  const uint32_t rows = load_be32(data, 8);
  const uint32_t cols = load_be32(data, 12);
  if (count == 0 || rows == 0 || cols == 0)
    fail(path, "IDX image file has a zero dimension (" + std::to_string(count) + " x " +
                   std::to_string(rows) + " x " + std::to_string(cols) + ")");
  if (rows > kMaxImageSide || cols > kMaxImageSide)
    fail(path, "implausible image size " + std::to_string(rows) + " x " + std::to_string(cols) +
                   " (limit " + std::to_string(kMaxImageSide) + " per side)");
  // Cannot overflow: count < 2^32 and rows * cols <= 2^32.
  const uint64_t pixels = uint64_t(count) * (uint64_t(rows) * cols);
  const std::string claim =
      std::to_string(count) + " images of " + std::to_string(rows) + " x " + std::to_string(cols);
  check_payload(path, data, 16, pixels, claim);

  IdxImages out;
  out.count = count;
  out.rows = int32_t(rows);
  out.cols = int32_t(cols);
  out.pixels.assign(data.begin() + 16, data.end());
  return out;
}

}  // namespace shardlens

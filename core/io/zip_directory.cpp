#include "core/io/zip_directory.h"

#include <algorithm>

namespace shardlens {
namespace {

constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr size_t kEndBytes = 22;
constexpr size_t kZip64LocatorBytes = 20;
constexpr size_t kZip64EndBytes = 56;
constexpr size_t kMaxComment = 65535;
// A central directory entry is at least 46 bytes: an archive cannot list more members than
// that, whatever its end record declares (libzip lists the count declared).
constexpr uint64_t kMinDirectoryEntry = 46;

uint64_t little_endian(const std::string& b, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t(uint8_t(b[at + i])) << (8 * i);
  return v;
}

}  // namespace

std::optional<ZipDirectorySize> zip_directory_size(const ZipReadAt& read_at,
                                                   uint64_t archive_bytes) {
  if (archive_bytes < kEndBytes) return std::nullopt;
  // The end record is the last thing in the file but for a comment of up to 64 KiB.
  const uint64_t tail_bytes = std::min<uint64_t>(archive_bytes, kEndBytes + kMaxComment);
  const uint64_t tail_at = archive_bytes - tail_bytes;
  const std::string tail = read_at(tail_at, size_t(tail_bytes));
  if (tail.size() != tail_bytes) return std::nullopt;
  size_t end = std::string::npos;
  for (size_t i = tail.size() - kEndBytes + 1; i-- > 0;) {
    if (little_endian(tail, i, 4) == kEndSignature) {
      end = i;
      break;
    }
  }
  if (end == std::string::npos) return std::nullopt;

  ZipDirectorySize size;
  size.members = little_endian(tail, end + 10, 2);
  size.directory_bytes = little_endian(tail, end + 12, 4);
  // A ZIP64 archive (more than 65,535 members, or past 4 GiB) keeps the real figures in a
  // record its locator, just before the end record, points to.
  const uint64_t end_at = tail_at + end;
  if (end_at >= kZip64LocatorBytes) {
    const std::string locator = read_at(end_at - kZip64LocatorBytes, kZip64LocatorBytes);
    if (locator.size() == kZip64LocatorBytes &&
        little_endian(locator, 0, 4) == kZip64LocatorSignature) {
      const uint64_t record_at = little_endian(locator, 8, 8);
      if (record_at <= archive_bytes - kZip64EndBytes) {
        const std::string record = read_at(record_at, kZip64EndBytes);
        if (record.size() == kZip64EndBytes && little_endian(record, 0, 4) == kZip64EndSignature) {
          size.members = std::max(size.members, little_endian(record, 32, 8));
          size.directory_bytes = std::max(size.directory_bytes, little_endian(record, 40, 8));
        }
      }
    }
  }
  // What a directory can hold is bounded by the file it is in.
  size.directory_bytes = std::min(size.directory_bytes, archive_bytes);
  size.members = std::min(size.members, archive_bytes / kMinDirectoryEntry);
  return size;
}

}  // namespace shardlens

#pragma once
// What a ZIP archive's central directory will cost to open, told from its end records before
// libzip reads it: libzip builds an entry (and ShardLens a listing) for every member, so a
// 100 MB archive of a million empty members took 433 MB under a 64 MiB budget.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace shardlens {

struct ZipDirectorySize {
  uint64_t members = 0;          // as the end record says, at most what the file can hold
  uint64_t directory_bytes = 0;  // the central directory's size, names included
};

// Reads `n` bytes at `offset` of an archive (fewer at its end).
using ZipReadAt = std::function<std::string(uint64_t offset, size_t n)>;

// The directory size declared by the end-of-central-directory record (and its ZIP64 record
// where there is one) of an archive of `archive_bytes`. Nothing when no end record is found:
// libzip then says what is wrong with the file.
std::optional<ZipDirectorySize> zip_directory_size(const ZipReadAt& read_at,
                                                   uint64_t archive_bytes);

// What opening a directory costs: kZipBytesPerMember a member (libzip's entry, ShardLens's
// listing and index) and kZipCopiesOfDirectory times the directory's bytes (its names are
// copied into each). Measured with libzip 1.9, peak RSS of opening and listing less the 7 MB
// of the CLI itself: a million members named like dump arrays (a 63 MB directory) 488 MB,
// charged 638 MB; 300,000 run-file members (35 MB) 187 MB, charged 193 MB.
inline constexpr uint64_t kZipBytesPerMember = 512;
inline constexpr uint64_t kZipCopiesOfDirectory = 2;

}  // namespace shardlens

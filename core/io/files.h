#pragma once
// File helpers: whole-file reads with clear errors, gzip detection, atomic writes.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/vocabulary/limits.h"

namespace shardlens {

// The one check of what a reader is given by path: it must be a regular file. A FIFO would
// block the open (or the read) forever, a socket or device never end; a directory is no
// file. Opens without blocking to find out. Throws InputError naming the path and what it is.
void require_regular_file(const std::string& path);

// What a command writes at an output path: one file, or files into a directory.
enum class OutputKind { File, Directory };

// The one check of where a command writes, made before it reads or writes anything (every
// command with --out calls it). Throws InputError "OUT: cannot write: ..." when
//  - OUT exists and is not a regular file (File) or a directory (Directory): a device, a FIFO
//    or a socket would be replaced by the rename of an atomic write (/dev/null became a
//    regular file);
//  - OUT is one of `inputs`, compared by filesystem identity (device and inode, so another
//    spelling of the path, a symlink or a hard link count): writing it would destroy the
//    file being read;
//  - OUT is a directory and an input lies in it (or in a folder below it, an epoch's) under a
//    name `writes` says the command may give a file it writes there.
// Inputs that do not exist are skipped: their readers report them.
void require_output(const std::string& out, OutputKind kind, const std::vector<std::string>& inputs,
                    const std::function<bool(const std::string& file_name)>& writes = {});

// Reads a file; throws InputError "PATH: cannot open (reason)" / "PATH: empty file".
// `max_bytes` guards against reading absurd files into memory.
std::string read_file_bytes(const std::string& path, size_t max_bytes = kMaxReadBytes);
// Returns the decompressed bytes if the data starts with the gzip magic, else the data.
std::string maybe_gunzip(const std::string& data, const std::string& origin,
                         size_t max_bytes = kMaxReadBytes);
// Whether the data starts with the gzip magic.
bool is_gzip(std::string_view data);
// What gunzip does at max_bytes: stop there and return the prefix (a header read before
// the size is known), refuse the rest as more than the header announced, or refuse it as
// over a limit. Decompression is incremental: memory follows the data that comes out.
enum class GunzipLimit { kPrefix, kTrailing, kFail };
std::string gunzip(const std::string& data, const std::string& origin, size_t max_bytes,
                   GunzipLimit on_limit);
// Writes to PATH.tmp-XXXX then renames, so a crash never leaves a half-written file.
void write_file_atomic(const std::string& path, const std::string& bytes);
// Files written together, all or none, for a command that writes many (export of 65,536
// ranks writes 131,084: write_file_atomic's fsync of each file and of its directory took
// 183 s of that export). Each file goes to a temporary file beside its target when added,
// unsynced; commit() makes all their data durable with one sync of the filesystem, renames
// them and syncs each directory once. Destroyed without commit() (a write failed, the disk
// filled), the set removes its temporary files and no target has been touched.
class AtomicFileSet {
 public:
  AtomicFileSet() = default;
  AtomicFileSet(const AtomicFileSet&) = delete;
  AtomicFileSet& operator=(const AtomicFileSet&) = delete;
  ~AtomicFileSet();
  void add(const std::string& path, const std::string& bytes);
  void commit();

 private:
  struct Pending {
    std::string temporary, target;
  };
  std::vector<Pending> m_pending;
};

// Reads class names, one per line (blank lines ignored, UTF-8 checked).
std::vector<std::string> read_class_names(const std::string& path);

// Atomic save for writers that need a file name rather than bytes (libzip): `fill` writes
// the complete file at the temporary path it is given; then it is fsynced and renamed over
// PATH. The temporary file is removed if `fill` throws.
void write_file_atomic_with(const std::string& path,
                            const std::function<void(const std::string& tmp_path)>& fill);

// Byte offset of the first invalid UTF-8 sequence (overlong forms, surrogates and code
// points above U+10FFFF count as invalid), or std::string_view::npos when valid.
size_t invalid_utf8_offset(std::string_view text);
inline bool is_valid_utf8(std::string_view text) {
  return invalid_utf8_offset(text) == std::string_view::npos;
}

}  // namespace shardlens

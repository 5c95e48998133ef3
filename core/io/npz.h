#pragma once
// NumPy .npz archives: a ZIP of .npy members (plus meta.json in ShardLens run files).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/io/npy.h"
#include "core/vocabulary/limits.h"

namespace shardlens {

// Member name (e.g. "target.npy", "meta.json") -> the member's raw bytes.
using NpzMembers = std::map<std::string, std::string>;

// One member as the archive's directory declares it (checked: a name an .npz may hold, no
// duplicate, stored or deflated, unencrypted, a size the codec can produce from the
// compressed bytes the archive really has).
struct NpzEntry {
  std::string name;
  uint64_t size = 0;             // declared uncompressed bytes
  uint64_t compressed_size = 0;  // bytes in the archive
};

// An open .npz whose members are read one at a time, so a reader can look at every
// member's .npy header (a few bytes) before it decides to inflate any data, and inflate a
// member incrementally: what it allocates grows with the data that really arrives, and a
// member that holds more than its declared size is refused at the first byte past it.
class NpzArchive {
 public:
  // From a file (read through libzip, never loaded whole), or from bytes that must outlive
  // the archive; `origin` names it in errors. Checks the directory (see NpzEntry).
  static NpzArchive open_file(const std::string& path);
  // Any ZIP archive (a torch.save .pt file, say): members may have any names, and are
  // otherwise checked as above (unique, stored or deflated, unencrypted, plausible sizes).
  // `is_zip` completes the message for a file that is no ZIP archive.
  static NpzArchive open_zip_file(const std::string& path, const char* is_zip);
  static NpzArchive from_bytes(const std::string& bytes, const std::string& origin);
  NpzArchive(NpzArchive&&) noexcept;
  NpzArchive& operator=(NpzArchive&&) noexcept;
  ~NpzArchive();

  const std::string& origin() const;
  const std::vector<NpzEntry>& entries() const;
  const NpzEntry* find(const std::string& name) const;
  // The first min(n, size) bytes of a member.
  std::string read_prefix(const std::string& name, size_t n);
  // The whole member, CRC checked; exactly its declared size or an InputError.
  std::string read(const std::string& name);
  // The .npy header of a member, with the byte count it announces checked against the
  // member's declared size: nothing need be allocated for data the member cannot hold.
  NpyHeader npy_header(const std::string& name);

 private:
  struct Impl;
  explicit NpzArchive(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

// Reads every member of an .npz. Members must be stored or deflated, unencrypted, named
// *.npy (or meta.json), unique, and add up to at most `max_bytes` uncompressed and within
// the load budget (core/vocabulary/memory_budget.h). Throws InputError "PATH: ..." on anything
// else, including corrupt or truncated archives.
NpzMembers read_npz(const std::string& path, size_t max_bytes = kMaxReadBytes);
// The same for an archive already in memory; `origin` names it in errors.
NpzMembers npz_members_from_bytes(const std::string& bytes, const std::string& origin,
                                  size_t max_bytes = kMaxReadBytes);

// True for the member names an .npz may hold: "NAME.npy" or "meta.json".
bool is_npz_member_name(const std::string& name);

// Writes an archive numpy.load opens, atomically (temporary file, fsync, rename). Members
// are stored, or deflated like numpy.savez_compressed when `compress` is set. Invalid or
// duplicate names throw std::invalid_argument (a programming error); write failures throw
// InputError naming the path.
void write_npz(const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& members,
               bool compress = false);

}  // namespace shardlens

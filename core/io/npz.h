#pragma once
// NumPy .npz archives: a ZIP of .npy members (plus meta.json in ShardLens run files).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/model/limits.h"

namespace shardlens {

// Member name (e.g. "target.npy", "meta.json") -> the member's raw bytes.
using NpzMembers = std::map<std::string, std::string>;

// Reads every member of an .npz. Members must be stored or deflated, unencrypted, named
// *.npy (or meta.json), unique, and add up to at most `max_bytes` uncompressed. Throws
// InputError "PATH: ..." on anything else, including corrupt or truncated archives.
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

#pragma once
// The LibTorch half of the .pt dump reader (pt_unpickle.cpp), for pt_dump.cpp. Plain C++17.
#include <cstdint>
#include <map>
#include <string>

#include "core/runfile/dump_array.h"

namespace shardlens {

// The members of a torch.save file that unpickling needs, read by pt_dump.cpp with libzip:
// LibTorch never parses the ZIP itself, so the sizes held against the budget are the sizes
// read (two ZIP readers could disagree about a crafted directory).
struct PtMembers {
  std::string pickle;                           // ARCHIVE/data.pkl
  std::map<std::string, std::string> storages;  // ARCHIVE/data/KEY, by KEY
};

// Every tensor (and Python int or float) of the dict torch.save wrote at `path`, from its
// members; all the members pt_dump.cpp checked decompress to `member_bytes`, within the load
// budget. Throws InputError naming the file (and the tensor) on anything it cannot read
// safely.
DumpArrays unpickle_pt_dump(const std::string& path, PtMembers members, uint64_t member_bytes);

}  // namespace shardlens

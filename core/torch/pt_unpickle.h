#pragma once
// The LibTorch half of the .pt dump reader (pt_unpickle.cpp), for pt_dump.cpp. Plain C++17.
#include <cstdint>
#include <string>

#include "core/runfile/dump_array.h"

namespace shardlens {

// Every tensor (and Python int or float) of the dict torch.save wrote at `path`, whose ZIP
// members pt_dump.cpp has checked: they decompress to `member_bytes`, within the load
// budget. Throws InputError naming the file (and the tensor) on anything it cannot read
// safely.
DumpArrays unpickle_pt_dump(const std::string& path, uint64_t member_bytes);

}  // namespace shardlens

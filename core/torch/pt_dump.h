#pragma once
// .pt dumps (a dict of tensors saved with torch.save) read with LibTorch's pickle_load,
// which executes no Python. No LibTorch types leak out of this header.
#include <string>

#include "core/runfile/dump_array.h"

namespace shardlens {

// Every tensor of the dict as a DumpArray (integer and bool tensors as integers, floating
// ones as doubles); Python ints and floats become 0-d arrays. Throws InputError naming the
// file when it is not a torch.save'd dict of tensors.
DumpArrays read_pt_dump_arrays(const std::string& path);

}  // namespace shardlens

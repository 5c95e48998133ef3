#pragma once
// The pickle of a torch.save'd dump (ARCHIVE/data.pkl), checked before LibTorch's unpickler
// sees it. That unpickler (LibTorch 1.13 at least) trusts its input: a memo index makes it
// allocate that many entries, a string length is allocated before it is read, an opcode that
// pops more than the stack holds, or past a MARK, reads outside its vectors, a storage type
// that is any integer indexes a table, and a tuple nested 10^5 deep overflows the stack when
// it is destroyed. This walk runs the pickle on a model of the stack (no values, only what
// each slot is) and refuses, with an InputError naming `origin`, anything a dict of tensors
// saved by torch.save does not need:
//   - opcodes other than those of protocol 2 that LibTorch reads, arguments past the end;
//   - memo indices that are not the next one (torch.save numbers them 0, 1, 2, ...) or
//     that were never set;
//   - pops below the stack's bottom or below the innermost MARK, a STOP that does not leave
//     exactly one value;
//   - GLOBALs other than torch._utils._rebuild_tensor_v2, collections.OrderedDict and the
//     torch.<Type>Storage classes of real, integer and bool types; REDUCE and BUILD of
//     anything that is not such a GLOBAL;
//   - a persistent id that is not ('storage', torch.<Type>Storage, key, location, numel >= 0);
//   - containers nested deeper than kMaxPickleNesting.
// Sizes, strides and offsets are left to the tensor checks after unpickling
// (core/torch/pt_dump.cpp), where their values are known.
#include <string>
#include <string_view>

namespace shardlens {

inline constexpr int kMaxPickleNesting = 64;

void check_pt_pickle(std::string_view pickle, const std::string& origin);

}  // namespace shardlens

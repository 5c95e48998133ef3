// .pt dump reading (pt_dump.h): the one reader of a user's file that hands it to LibTorch,
// so nothing the file claims is believed before it is checked. This half, without LibTorch:
// the file must be a regular file, and the members its ZIP directory declares (read with
// libzip, nothing inflated) must fit the load budget before LibTorch opens it, since
// LibTorch allocates every member it reads at its declared size. pt_unpickle.cpp checks the
// pickle and every tensor.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/io/files.h"
#include "core/io/npz.h"
#include "core/model/memory_budget.h"
#include "core/torch/pt_dump.h"
#include "core/torch/pt_unpickle.h"

namespace shardlens {
namespace {

constexpr const char* kPtIsZip =
    "a torch.save file is a ZIP archive; files saved by torch before 1.6 are not supported";

std::optional<uint64_t> add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<uint64_t> mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// What unpickling may allocate per byte of pickle: an EMPTY_LIST or EMPTY_DICT opcode (1
// byte) makes a list or dict object of about 100 bytes, and a stack slot; the pickle walk
// (check_pt_pickle) needs less. A dump's pickle is a few kB, so this costs it nothing.
constexpr uint64_t kUnpickledBytesPerByte = 256;

// The members' declared sizes against the budget (the pickle's as what unpickling it
// may allocate); returns their total.
uint64_t check_members(const std::string& path) {
  uint64_t total = 0;
  for (const NpzEntry& e : read_zip_directory(path, kPtIsZip)) {
    const bool pickle = e.name == "data.pkl" || e.name.ends_with("/data.pkl");
    const auto bytes = pickle
                           ? add(e.size, mul(e.size, kUnpickledBytesPerByte).value_or(UINT64_MAX))
                           : std::optional<uint64_t>(e.size);
    const auto sum = bytes ? add(total, *bytes) : std::nullopt;
    total = sum ? *sum : std::numeric_limits<uint64_t>::max();
  }
  check_load_budget(path, total, "its members decompressed and unpickled");
  return total;
}

}  // namespace

DumpArrays read_pt_dump_arrays(const std::string& path) {
  require_regular_file(path);
  return unpickle_pt_dump(path, check_members(path));
}

}  // namespace shardlens

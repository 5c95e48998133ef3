// .pt dump reading (pt_dump.h): the one reader of a user's file that hands it to LibTorch,
// so nothing the file claims is believed before it is checked. This half, without LibTorch:
// the file must be a regular file, the members its ZIP directory declares (read with
// libzip, nothing inflated) must fit the load budget, and then the pickle and the storages
// are read with libzip, each at most its checked size. LibTorch never parses the ZIP (its
// own reader allocates every member at the size its own parse of the directory finds).
// pt_unpickle.cpp checks the pickle and every tensor.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/io/detail.h"
#include "core/io/npz.h"
#include "core/torch/pt_dump.h"
#include "core/torch/pt_unpickle.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

using io_detail::checked_add;
using io_detail::checked_mul;

constexpr const char* kPtIsZip =
    "a torch.save file is a ZIP archive; files saved by torch before 1.6 are not supported";

// What unpickling may allocate per byte of pickle: an EMPTY_LIST or EMPTY_DICT opcode (1
// byte) makes a list or dict object of about 100 bytes, and a stack slot; the pickle walk
// (check_pt_pickle) needs less. A dump's pickle is a few kB, so this costs it nothing.
constexpr uint64_t kUnpickledBytesPerByte = 256;

// The members' declared sizes against the budget (the pickle's as what unpickling it
// may allocate); returns their total.
uint64_t check_members(const NpzArchive& zip) {
  uint64_t total = 0;
  for (const NpzEntry& e : zip.entries()) {
    const bool pickle = e.name == "data.pkl" || e.name.ends_with("/data.pkl");
    const auto bytes =
        pickle
            ? checked_add(e.size, checked_mul(e.size, kUnpickledBytesPerByte).value_or(UINT64_MAX))
            : std::optional<uint64_t>(e.size);
    const auto sum = bytes ? checked_add(total, *bytes) : std::nullopt;
    total = sum ? *sum : std::numeric_limits<uint64_t>::max();
  }
  check_load_budget(zip.origin(), total, "its members decompressed and unpickled");
  return total;
}

// The folder torch.save puts every member in ("archive/", or the file's stem for older
// versions): as LibTorch finds it, the first member's.
std::string archive_folder(const NpzArchive& zip) {
  if (zip.entries().empty()) throw InputError(zip.origin() + ": an empty ZIP archive");
  const std::string& first = zip.entries().front().name;
  const size_t slash = first.find('/');
  if (slash == std::string::npos || slash == 0)
    throw InputError(zip.origin() + ": member " + io_detail::quote_excerpt(first) +
                     " is not in a folder (torch.save puts every member in one)");
  return first.substr(0, slash + 1);
}

// The pickle and every storage (FOLDER/data/KEY), each read at most at its checked size.
PtMembers read_members(NpzArchive& zip) {
  const std::string folder = archive_folder(zip);
  const std::string pickle = folder + "data.pkl";
  if (!zip.find(pickle))
    throw InputError(zip.origin() + ": no member " + io_detail::quote_excerpt(pickle) +
                     " (the pickle of a torch.save file)");
  PtMembers members;
  members.pickle = zip.read(pickle);
  const std::string data = folder + "data/";
  for (const NpzEntry& e : zip.entries())
    if (e.name.size() > data.size() && e.name.compare(0, data.size(), data) == 0)
      members.storages.emplace(e.name.substr(data.size()), zip.read(e.name));
  return members;
}

}  // namespace

DumpArrays read_pt_dump_arrays(const std::string& path) {
  NpzArchive zip = NpzArchive::open_zip_file(path, kPtIsZip);  // a regular file only
  const uint64_t member_bytes = check_members(zip);
  return unpickle_pt_dump(path, read_members(zip), member_bytes);
}

}  // namespace shardlens

// Fuzz target: imports of per-rank dumps (core/import), through the same entry point as
// `shardlens-cli import`. The first input byte picks the format, the rest is the file:
//   0 .npz as raw archive bytes, 1 .npz from a member list (fuzz_util.h, unpack_members),
//   2 .npy, 3 .csv.
// The file is named dump_rank0.EXT so dumps without a rank array still get one.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/runfile/import.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string path;
  switch (data[0] % 4) {
    case 0:
      path = fuzz::scratch_file("dump_rank0.npz", rest);
      break;
    case 1:
      path = fuzz::scratch_file("dump_rank0.npz", fuzz::npz_bytes(fuzz::unpack_members(rest)));
      break;
    case 2:
      path = fuzz::scratch_file("dump_rank0.npy", rest);
      break;
    default:
      path = fuzz::scratch_file("dump_rank0.csv", rest);
      break;
  }
  // Checks across dumps (world size, rank coverage, classes) name the import as a whole.
  fuzz::expect_clean(
      path, [&] { import_dumps({path}, ImportOptions{}); }, "import: ");
  return 0;
}

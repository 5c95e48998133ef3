// Fuzz target: run files (.slrun, core/runfile) read from memory. The low bit of the first
// input byte picks how the rest is taken:
//   0 raw archive bytes: the ZIP structure, meta.json and checksum checks;
//   1 a member list (fuzz_util.h, unpack_members) zipped with meta.json's checksums made to
//     match, so mutated arrays and metadata reach the validation behind the checksums.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/runfile/runfile.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string bytes;
  if (data[0] & 1) {
    fuzz::Members members = fuzz::unpack_members(rest);
    fuzz::refresh_run_checksums(members);
    bytes = fuzz::npz_bytes(members);
  } else {
    bytes.assign(rest);
  }
  const std::string origin = "fuzz.slrun";
  fuzz::expect_clean(origin, [&] { parse_run_epochs(bytes, origin); });  // one epoch or several
  return 0;
}

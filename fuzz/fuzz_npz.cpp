// Fuzz target: .npz archives (core/io/npz), from memory and from a file. Both readers see
// the same bytes, so they must agree: same members, or both an InputError.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/io/npz.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string origin = "fuzz.npz";
  std::optional<NpzMembers> from_memory, from_file;
  fuzz::expect_clean(origin, [&] { from_memory = npz_members_from_bytes(bytes, origin); });
  const std::string path = fuzz::scratch_file("fuzz.npz", bytes);
  fuzz::expect_clean(path, [&] { from_file = read_npz(path); });
  if (from_memory != from_file) {
    std::fprintf(stderr, "fuzz: read_npz and npz_members_from_bytes disagree (%s / %s)\n",
                 from_file ? "accepted" : "rejected", from_memory ? "accepted" : "rejected");
    std::abort();
  }
  return 0;
}

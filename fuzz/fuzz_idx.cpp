// Fuzz target: IDX label and image files (core/io/idx), plain or gzip-compressed. The
// readers take a path, so every input goes through a scratch file.
#include <cstdint>
#include <string>

#include "core/io/idx.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  const std::string path =
      fuzz::scratch_file("fuzz-idx-ubyte", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean(path, [&] { read_idx_labels(path); });
  fuzz::expect_clean(path, [&] { read_idx_images(path); });
  return 0;
}

// Fuzz target: .npy arrays read from memory (core/io/npy), both as integers and doubles.
#include <cstdint>
#include <string>

#include "core/io/npy.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string origin = "fuzz.npy";
  fuzz::expect_clean(origin, [&] {
    std::vector<int64_t> shape;
    const auto values = npy_integers_from_bytes(bytes, origin, &shape);
    (void)values;
  });
  fuzz::expect_clean(origin, [&] {
    std::vector<int64_t> shape;
    const auto values = npy_doubles_from_bytes(bytes, origin, &shape);
    (void)values;
  });
  return 0;
}

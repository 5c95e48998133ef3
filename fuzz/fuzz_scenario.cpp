// Fuzz target: scenario JSON files (core/scenario), as lesson presets and --scenario load
// them.
#include <cstdint>
#include <string>

#include "core/evaluation/scenario.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  const std::string path =
      fuzz::scratch_file("scenario.json", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean(path, [&] { load_scenario_file(path); });
  return 0;
}

// Fuzz target: a class hierarchy file (core/io/class_hierarchy.h, the dataset's
// ",hierarchy=FILE"): the first input byte is the dataset's number of classes (1 to 256),
// the rest the file. Passing means groups for every class, or an InputError naming the file.
#include <cstdint>
#include <string>

#include "core/io/class_hierarchy.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  if (size == 0) return 0;
  const int32_t classes = int32_t(data[0]) + 1;
  const std::string path =
      fuzz::scratch_file("hierarchy.txt", {reinterpret_cast<const char*>(data) + 1, size - 1});
  fuzz::expect_clean(path, [&] {
    const ClassHierarchy h = read_class_hierarchy(path, classes);
    if (h.group_of.size() != size_t(classes)) __builtin_trap();
    for (int32_t g : h.group_of)
      if (g < 0 || g >= h.size()) __builtin_trap();
  });
  return 0;
}

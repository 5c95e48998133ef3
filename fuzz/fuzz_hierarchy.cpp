// Fuzz target: a class hierarchy file (core/io/class_hierarchy.h, the dataset's
// ",hierarchy=FILE"): the first input byte is the dataset's number of classes (1 to 256),
// the rest the file. Passing means, on every level (one to kMaxHierarchyLevels), a group for
// every class inside its group of the level above, or an InputError naming the file.
#include <cstdint>
#include <string>

#include "core/io/class_hierarchy.h"
#include "core/vocabulary/limits.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  if (size == 0) return 0;
  const int32_t classes = int32_t(data[0]) + 1;
  const std::string path =
      fuzz::scratch_file("hierarchy.txt", {reinterpret_cast<const char*>(data) + 1, size - 1});
  fuzz::expect_clean(path, [&] {
    const ClassHierarchy h = read_class_hierarchy(path, classes);
    if (h.depth() < 1 || size_t(h.depth()) > kMaxHierarchyLevels) __builtin_trap();
    for (size_t l = 0; l < h.levels.size(); ++l) {
      const ClassGroups& level = h.levels[l];
      if (level.group_of.size() != size_t(classes)) __builtin_trap();
      for (size_t c = 0; c < level.group_of.size(); ++c) {
        const int32_t g = level.group_of[c];
        if (g < 0 || g >= level.size()) __builtin_trap();
        // Two classes in one group here share their group above.
        const int32_t n = level.node[size_t(g)];
        if (l > 0 && h.levels[l - 1].group_of[c] !=
                         h.levels[l - 1].group_of_node(
                             h.nodes[size_t(n)].depth < int32_t(l) ? n : h.nodes[size_t(n)].parent))
          __builtin_trap();
      }
    }
  });
  return 0;
}

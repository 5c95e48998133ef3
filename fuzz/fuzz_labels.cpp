// Fuzz target: dataset labels, predictions and class names loaded through their spec
// strings (core/specs, core/labels): the first input byte picks the kind, the rest is the
// file. Kinds: 0 idx:PATH, 1 npy:PATH, 2 csv:PATH (these also as predictions for the labels
// they gave), 3 a class-names file (csv:LABELS,names=PATH).
#include <cstdint>
#include <string>

#include "core/dataset/labels.h"
#include "core/sim/specs.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  if (size == 0) return 0;
  static const char* const kKinds[] = {"idx", "npy", "csv", "names"};
  const std::string kind = kKinds[data[0] % 4];
  const std::string path =
      fuzz::scratch_file("labels." + kind, {reinterpret_cast<const char*>(data) + 1, size - 1});
  if (kind == "names") {
    // Names are an option of the file kinds; three classes, so three names are expected.
    const std::string labels = fuzz::scratch_file("labels-for-names.csv", "label\n0\n1\n2\n");
    fuzz::expect_clean(path, [&] { load_labels("csv:" + labels + ",names=" + path); });
    return 0;
  }
  fuzz::expect_clean(path, [&] {
    const Labels labels = load_labels(kind + ":" + path);
    if (kind != "idx")
      fuzz::expect_clean(path, [&] { load_predictions(kind + ":" + path, labels); });
  });
  return 0;
}

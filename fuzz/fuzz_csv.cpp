// Fuzz target: CSV tables (core/io/csv) and the integer column the label and prediction
// readers take from them.
#include <cstdint>
#include <string>

#include "core/io/csv.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string origin = "fuzz.csv";
  fuzz::expect_clean(origin, [&] {
    const CsvTable table = parse_csv(text, origin);
    // Like the label and prediction readers (core/dataset/dataset_spec.cpp, predictions_file.cpp).
    fuzz::expect_clean(origin, [&] { csv_integer_column(table, {"label", "target"}, origin); });
    fuzz::expect_clean(origin, [&] { csv_integer_column(table, {"prediction"}, origin); });
  });
  return 0;
}

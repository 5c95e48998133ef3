// Fuzz target: the cells of samples of many counts (segmentation, tokens, multilabel; dump
// format 3, core/runfile/dump_cells.h) through the import and the run file that keeps them.
// The first input byte picks how the rest is taken:
//   0 a dump's member list (fuzz_util.h, unpack_members) imported as dump_rank0.npz: the
//     arrays cells_per_record, cell_target, cell_prediction, cell_count, sample_size, ignored
//     and settings_json's task, ignore_index and num_labels;
//   1 a CSV dump of cells (a count column, a record column), imported as --task tokens;
//   2 a run file's member list, checksums made to match: rank<r>_cells_per_record,
//     rank<r>_cell_key and rank<r>_cell_count behind them.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/runfile/import.h"
#include "core/runfile/runfile.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardlens;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      const std::string path =
          fuzz::scratch_file("dump_rank0.npz", fuzz::npz_bytes(fuzz::unpack_members(rest)));
      // Checks across dumps (world size, rank coverage, classes) name the import as a whole.
      fuzz::expect_clean(
          path, [&] { import_dumps({path}, ImportOptions{}); }, "import: ");
      break;
    }
    case 1: {
      const std::string path = fuzz::scratch_file("dump_rank0.csv", rest);
      ImportOptions options;
      options.task = Task::Tokens;
      fuzz::expect_clean(
          path, [&] { import_dumps({path}, options); }, "import: ");
      break;
    }
    default: {
      fuzz::Members members = fuzz::unpack_members(rest);
      fuzz::refresh_run_checksums(members);
      const std::string bytes = fuzz::npz_bytes(members);
      const std::string origin = "fuzz.slrun";
      fuzz::expect_clean(origin, [&] { parse_run_epochs(bytes, origin); });
      break;
    }
  }
  return 0;
}

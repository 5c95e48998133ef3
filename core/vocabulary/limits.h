#pragma once
// The hard caps of ShardLens, in one place. Every reader, writer, spec parser and option
// check uses these, so whatever one part accepts the others accept too: a simulation that
// parses can be saved as a run file, and a run file that saves can be loaded.
//
// Memory bounds are separate from the caps: a value within the caps can still ask for more
// memory than a bound allows (a 32768-class matrix is 8 GiB of doubles), and the bound then
// says so before anything is allocated. The bound every load is checked against, on top of
// these caps, is the load budget of core/vocabulary/memory_budget.h.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/vocabulary/types.h"

namespace shardlens {

// Classes of a confusion matrix. The engine packs (target, prediction) as target * C +
// prediction in 32 bits, and one C x C matrix of doubles at the cap (8 GiB) must fit in
// kMaxReadBytes so that a file holding it can be read back.
inline constexpr int32_t kMaxClasses = int32_t(1) << 15;

// Ranks of a run file or an import (recorded runs may be large).
inline constexpr int kMaxWorldSize = 1 << 16;
// Ranks a local run starts as processes of this machine (ShardLens's own launcher).
inline constexpr int kMaxLocalWorldSize = 1024;
// Ranks a simulation (the sampler) plays.
inline constexpr int kMaxSimulatedWorldSize = 4096;

// Validations a scenario runs in one epoch (Lightning's val_check_interval), each one a
// whole evaluation.
inline constexpr int kMaxValidationsPerEpoch = 1000;

// Dataset samples: orders and shards hold 32-bit indices.
inline constexpr int64_t kMaxSamples = int64_t{0xFFFFFFFF};

// Epochs of one run file (a training run's validation epochs).
inline constexpr size_t kMaxEpochs = 100000;

// Bytes one file read (or the decompressed members of one archive) may take in memory.
inline constexpr size_t kMaxReadBytes = size_t(1) << 34;  // 16 GiB

// The longest .npy header dictionary a reader accepts. numpy itself refuses headers over
// 10 kB by default; more is allowed for many-dimensional shapes, with a bound so that a
// reader never walks (or allocates for) megabytes of junk.
inline constexpr size_t kMaxNpyHeaderBytes = size_t(1) << 20;

// Rows and columns of an IDX image (stored in int32 fields; real images are far smaller).
inline constexpr uint32_t kMaxImageSide = 1u << 16;

// A class-names file: names are tiny, so a larger file is almost certainly the wrong one.
inline constexpr size_t kMaxClassNamesFileBytes = size_t(64) << 20;
// Bytes of the dense per-rank panels' non-zero cells a figure set keeps between building and
// painting them (export of many ranks); beyond it a panel's matrix is built again to paint.
inline constexpr size_t kMaxFigureStoredCellsBytes = size_t(64) << 20;
// Bytes of one class name (a names file, a run file's meta.json): longer is no label but a
// payload (a 100,000-character name took the GUI to an abort measuring it).
inline constexpr size_t kMaxClassNameBytes = 1024;
// Levels of a class hierarchy file (",hierarchy=FILE": a path of ancestors per class).
// WordNet's hypernym paths for ImageNet's classes are about 20 deep; each level is a row
// check and a figure, so a path of thousands is a wrong file, not a taxonomy.
inline constexpr size_t kMaxHierarchyLevels = 32;

// A scenario file (every setting of a simulation, a lesson): kilobytes in practice; the
// largest lists in it (rank seeds, recorded indices) stay far below this.
inline constexpr size_t kMaxScenarioFileBytes = size_t(16) << 20;

// Levels of lists and objects a JSON document (meta.json, a scenario file, settings_json) may
// nest: ShardLens writes and reads a few; each further level costs the parser a node and a
// stack entry, so five million of them (a 10 MB file) took 709 MB before this bound.
inline constexpr size_t kMaxJsonDepth = 256;

// A run file's format_version field: far past any version, so a larger one is garbage
// rather than a newer file.
inline constexpr int64_t kMaxFormatVersionField = int64_t(1) << 20;

// Cells of all the matrices an import builds (1 GiB of doubles): 1000 classes on 128 ranks,
// or 8000 classes on one.
inline constexpr uint64_t kMaxImportMatrixCells = uint64_t(1) << 27;

// A simulation draws its permutation on a second core while the predictions load. Predictions
// computed from the labels (perfect, noisy) are packed over the targets, so that holds 8
// bytes a sample, what the evaluation holds anyway, at any n. Predictions read from a file
// sit beside the targets until packed: 12 bytes a sample with the permutation. Up to this many
// samples (256 MB of permutation) that costs nothing worth counting; past it those load
// first and the plan is drawn after, so 10^8 samples stay under 1 GB.
inline constexpr int64_t kMaxOverlappedPlanSamples = int64_t(1) << 26;

// One value in a run's store. The largest value ShardLens's ranks put is a matrix at the
// class cap (rank_protocol.h: int32 classes, then C x C float64): 4 + 8 * 32768^2 bytes, 8 GiB
// and 4 bytes. A rank's records (8 + 17 bytes per record) stay below it up to 505 million
// records on one rank. A run's store is bounded tighter, by what that run's ranks can put
// (run_store_limits in core/realrun/rank_protocol.h); this is the cap of any store. Bytes are
// kept as they arrive, never reserved from a peer's declared length.
inline constexpr uint64_t kMaxStoreValueBytes =
    4 + sizeof(double) * uint64_t(kMaxClasses) * uint64_t(kMaxClasses);
// Every key and value a store holds together, plus what its clients have sent of requests not
// yet whole, for a store that knows nothing of its run (a run's own is run_store_limits'):
// 4 values at the cap.
inline constexpr uint64_t kMaxStoreTotalBytes = 4 * kMaxStoreValueBytes;
// Items of one store frame (a request's keys or values): no peer of ours sends more.
inline constexpr uint32_t kMaxStoreFrameItems = uint32_t(1) << 20;

// Seconds a real run's collective or store wait may take (--timeout).
inline constexpr int kMaxRunTimeoutSeconds = 86400;

// A value outside its range, in the one wording of every range check (the scenario table's,
// the world size's): "--world-size: 5000 is out of range (1 to 4096)"; `cap_of` names whose
// cap `max` is when it is not the setting's own ("... (1 to 1024 for a local run)").
inline InputError range_error(const std::string& name, int64_t value, int64_t min, int64_t max,
                              const std::string& cap_of = {}) {
  return InputError(name + ": " + std::to_string(value) + " is out of range (" +
                    std::to_string(min) + " to " + std::to_string(max) +
                    (cap_of.empty() ? "" : " for " + cap_of) + ")");
}

// The one world size check: from 1 to the cap of its use, kMaxSimulatedWorldSize for a
// simulation (the sampler, the loader, Accelerate's shards; the scenario table's row has the
// same range, checked by range_error), or kMaxLocalWorldSize for the ranks a local run starts
// (cap_of "a local run").
inline void check_world_size(int64_t world_size, int max = kMaxSimulatedWorldSize,
                             const std::string& cap_of = {}) {
  if (world_size < 1 || world_size > max)
    throw range_error("--world-size", world_size, 1, max, cap_of);
}

static_assert(uint64_t(kMaxClasses) * uint64_t(kMaxClasses) - 1 <= UINT32_MAX,
              "the engine packs target * C + prediction in 32 bits");
static_assert(uint64_t(kMaxClasses) * uint64_t(kMaxClasses) * sizeof(double) <= kMaxReadBytes,
              "one matrix at the class cap must fit in what a reader accepts");
static_assert(kMaxLocalWorldSize <= kMaxWorldSize, "every local run must fit in a run file");
static_assert(kMaxSimulatedWorldSize <= kMaxWorldSize,
              "every simulated world size must fit in a run file");

}  // namespace shardlens

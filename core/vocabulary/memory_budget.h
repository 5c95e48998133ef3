#pragma once
// The memory budget of one load: the one policy every reader (run files, dumps, .npy, .npz,
// IDX, CSV) applies before it allocates for what a file claims to hold. A file that needs
// more is refused with a message naming it, the size it needs and the budget, so a small
// hostile or broken file cannot take gigabytes (or the GUI with the user's work) with it.
//
// The budget is process-wide: the CLI sets it from --max-memory, the GUI from its settings,
// the fuzz targets to a small value so that libFuzzer's -malloc_limit_mb catches a reader
// that allocates past it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardlens {

// Physical memory of this machine in bytes (MemTotal), or 0 when it cannot be told.
uint64_t physical_memory_bytes();

// Half of physical memory: a load that fits leaves the rest to the desktop and to what the
// application already holds. 4 GiB when physical memory cannot be told.
uint64_t default_load_budget();

// The current budget (default_load_budget() until set). Thread-safe.
uint64_t load_budget();
// Sets the budget; 0 restores the default.
void set_load_budget(uint64_t bytes);

// "512M", "2G", "1.5GiB", "800000000" (bytes), "64k": binary units (K = 1024). nullopt when
// the text is not a size or is zero.
std::optional<uint64_t> parse_memory_size(std::string_view text);
// "1.9 GiB", "512 MiB", "300 bytes": for messages.
std::string memory_size_text(uint64_t bytes);

// Throws InputError "ORIGIN: needs 1.9 GiB of memory (WHAT), more than the 512 MiB memory
// budget (set with --max-memory or in Settings)" when `need_bytes` exceeds the budget.
void check_load_budget(const std::string& origin, uint64_t need_bytes, const std::string& what);

// Bytes a parsed JSON value (or object key) holds at the parser's peak, its string bytes apart:
// measured with nlohmann 3.11 and glibc, two million of each: {} in a list 115, [] 84, a
// number 44, "" 92, an object member 123 (its node, key and value).
inline constexpr uint64_t kJsonBytesPerValue = 128;

// --- What an evaluation holds: the one estimate every source of one is checked with ----------
//
// A file or a flag declares sizes (a run file's dataset_size and classes, a dump's largest
// index, a label file's largest class, --dataset synthetic:n=...) from which an evaluation
// allocates per-index arrays and C x C matrices. Simulations, run files, imports and the GUI
// all check the sizes here before allocating, so a 15 KB file cannot declare its way to
// gigabytes and a refusal always names what declared the size.
struct EvaluationSize {
  int64_t samples = 0;      // dataset indices (per-index arrays: coverage, keys, the order)
  int64_t classes = 0;      // C: the C x C matrices
  int64_t world_size = 1;   // one matrix per rank
  int64_t records = 0;      // records held in memory (runs, imports; a simulation derives its own)
  int64_t evaluations = 1;  // evaluations held at once (validations of an epoch, a run's epochs)
};

// Bytes per dataset index: a simulation's packed keys and sampler order (4 + 4), the
// coverage byte, and a run's record walk (which rank saw an index last, 2).
inline constexpr uint64_t kEvaluationBytesPerSample = 11;
// Bytes per stored record (a Record: index, target, prediction, flags, padded).
inline constexpr uint64_t kEvaluationBytesPerRecord = 24;
// C x C matrices of doubles an evaluation holds: two per rank (as accumulated, and the exact
// counts the diagnosis compares them with) and five more (synced, expected, distinct, the
// ranks' sum and one the diagnosis works in).
inline constexpr uint64_t kEvaluationMatricesPerRank = 2;
inline constexpr uint64_t kEvaluationMatricesShared = 5;

// The bytes an evaluation of that size needs (saturating: never wraps).
uint64_t evaluation_memory(const EvaluationSize& size);
// "4294967295 samples, 10 classes, 2 ranks" (classes and ranks when there are classes, and the
// records when there are some).
std::string evaluation_size_text(const EvaluationSize& size);
// check_load_budget for an evaluation (`already`: bytes held for evaluations loaded with it):
// "ORIGIN: needs 44 GiB of memory (an evaluation of 4294967295 samples, 10 classes, 2 ranks),
// more than the 512 MiB memory budget ...".
void check_evaluation_budget(const std::string& origin, const EvaluationSize& size,
                             uint64_t already = 0);

}  // namespace shardlens

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

}  // namespace shardlens

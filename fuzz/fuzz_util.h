#pragma once
// Helpers shared by the fuzz targets (fuzz/fuzz_*.cpp). Each target feeds one reader and
// accepts exactly two outcomes: a value, or an InputError whose message starts with the
// file it was given. Anything else (a crash, a sanitizer report, another exception type)
// is a bug in the reader: the exception is left to escape so libFuzzer (or the replay
// driver) stops on it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/vocabulary/types.h"

namespace shardlens::fuzz {

// The load budget (core/vocabulary/memory_budget.h) every target runs under, set before the
// first input. scripts/dev/fuzz.sh passes the same figure to libFuzzer as -malloc_limit_mb, so a
// reader that allocates more than the budget for any input is a finding: inputs are a few
// kB, and only a size declared in the file (and not checked) can ask for more.
inline constexpr uint64_t kFuzzLoadBudgetMb = 64;

// Writes `bytes` to NAME in this process's scratch directory (/dev/shm when it exists, so
// per-iteration files never touch a disk) and returns the path. The directory is removed
// when the process exits.
std::string scratch_file(const std::string& name, std::string_view bytes);

// Aborts with the message when an InputError does not name `origin` first ("PATH: ...").
// `also` is a second accepted prefix (e.g. "import: " for checks across several dumps).
[[noreturn]] void bad_message(const std::string& origin, const std::string& message);

// With SHARDLENS_FUZZ_VERBOSE set, prints each rejection (to check what a corpus reaches).
void note_rejection(const std::string& message);

template <typename F>
void expect_clean(const std::string& origin, F&& read, const char* also = nullptr) {
  try {
    read();
  } catch (const InputError& e) {
    const std::string message = e.what();
    const bool names_origin = message.rfind(origin + ": ", 0) == 0;
    const bool names_also = also && message.rfind(also, 0) == 0;
    if (!names_origin && !names_also) bad_message(origin, message);
    note_rejection(message);
  }
}

// Archive members as the fuzzer sees them in the "repacked" modes. Zip members carry CRCs
// that a mutation of their content breaks, so a fuzzer working on raw archive bytes seldom
// gets past libzip; here it mutates a plain list and the target zips it (fresh CRCs).
// Layout, repeated: 1 byte name length, the name, 2 bytes little-endian data length, the
// data. A truncated tail is dropped. parse_member_list keeps every entry as written (any
// name, repeats too); unpack_members skips invalid or repeated names, since the .npz writer
// rejects them as programming errors.
using Members = std::vector<std::pair<std::string, std::string>>;
Members parse_member_list(std::string_view input);
Members unpack_members(std::string_view input);
std::string pack_members(const Members& members);  // the inverse, for seed corpora

// The .npz bytes write_npz produces for `members`.
std::string npz_bytes(const Members& members);

// Rewrites meta.json's "members" checksums to match the members, where meta.json is a JSON
// object whose entry for a member is an object: the run-file reader then gets past its
// SHA-256 check to the validation behind it. Other meta.json content is left as it is.
void refresh_run_checksums(Members& members);

}  // namespace shardlens::fuzz

#pragma once
// SHA-256 (FIPS 180-4) of in-memory bytes. Run files record one digest per member in
// meta.json so a member swapped or damaged after writing is caught, and so users can check
// members with Python's hashlib.
#include <string>
#include <string_view>

namespace shardlens {

// Lower-case hexadecimal digest (64 characters).
std::string sha256_hex(std::string_view data);

}  // namespace shardlens

#pragma once
// Helpers shared by the readers in core/io. Not part of the public API.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "core/vocabulary/types.h"

namespace shardlens::io_detail {

// Every reader error starts with the file (or archive member) so the user knows which
// input to fix.
[[noreturn]] inline void fail(const std::string& origin, const std::string& what) {
  throw InputError(origin + ": " + what);
}

// Size arithmetic on values read from files: overflow means the file lies about its size.
inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  if (b > std::numeric_limits<uint64_t>::max() - a) return std::nullopt;
  return a + b;
}

inline uint32_t load_be32(std::string_view bytes, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

// Unsigned integer of `width` bytes (1..8) in the given byte order.
inline uint64_t load_uint(const unsigned char* p, size_t width, bool big_endian) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) {
    const size_t k = big_endian ? i : width - 1 - i;
    v = (v << 8) | p[k];
  }
  return v;
}

// Quotes a short excerpt of untrusted text for an error message, keeping messages one line
// and bounded even when the input is binary junk.
std::string quote_excerpt(std::string_view text, size_t max_chars = 40);

}  // namespace shardlens::io_detail

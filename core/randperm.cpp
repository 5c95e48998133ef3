#include "core/randperm.h"

#include <charconv>
#include <numeric>
#include <random>

#include "core/types.h"

namespace shardlens {

TorchVersion TorchVersion::parse(const std::string& text) {
  TorchVersion v;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [p1, e1] = std::from_chars(begin, end, v.major);
  if (e1 != std::errc() || p1 == end || *p1 != '.') {
    throw InputError("--torch-version: '" + text + "' is not a version like 1.13 or 2.7");
  }
  auto [p2, e2] = std::from_chars(p1 + 1, end, v.minor);
  if (e2 != std::errc() || (p2 != end && *p2 != '.' && *p2 != '+') || v.major < 1) {
    throw InputError("--torch-version: '" + text + "' is not a version like 1.13 or 2.7");
  }
  return v;
}

std::string TorchVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

// torch.randperm for n < 2^32 on CPU (aten/src/ATen/native/TensorFactories.cpp): swap each
// position with a later one chosen by one 32-bit draw. Draws for the next positions do not
// depend on the array, so they are made ahead in blocks and the swap targets prefetched:
// the loop is bound by cache misses, not by arithmetic.
void randperm_swap_loop(uint32_t* out, int64_t n, uint32_t seed32) {
  std::iota(out, out + n, 0u);
  std::mt19937 gen(seed32);
  constexpr int64_t kBlock = 32;
  int64_t targets[kBlock];
  for (int64_t base = 0; base < n - 1; base += kBlock) {
    const int64_t len = std::min<int64_t>(kBlock, n - 1 - base);
    for (int64_t j = 0; j < len; ++j) {
      const int64_t i = base + j;
      targets[j] = i + static_cast<int64_t>(gen() % static_cast<uint64_t>(n - i));
      __builtin_prefetch(out + targets[j], 1);
    }
    for (int64_t j = 0; j < len; ++j) std::swap(out[base + j], out[targets[j]]);
  }
}

// PyTorch >= 2.7, n >= UINT32_MAX / 20: the inside-out shuffle with 64-bit draws.
void randperm_inside_out_loop(uint32_t* out, int64_t n, uint32_t seed32) {
  std::mt19937 gen(seed32);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t hi = gen();
    const uint64_t lo = gen();
    const uint64_t draw = (hi << 32) | lo;
    const int64_t z = static_cast<int64_t>(draw % static_cast<uint64_t>(i + 1));
    out[i] = out[z];
    out[z] = static_cast<uint32_t>(i);
  }
}

std::vector<uint32_t> randperm(int64_t n, int64_t seed, TorchVersion version) {
  if (n < 0 || n > int64_t{0xFFFFFFFF}) {
    throw InputError("randperm: n = " + std::to_string(n) + " is out of range");
  }
  std::vector<uint32_t> out(static_cast<size_t>(n));
  // The generator keeps the low 32 bits of the seed (two's complement for negatives).
  const auto seed32 = static_cast<uint32_t>(static_cast<uint64_t>(seed));
  if (version.has_large_randperm() && n >= kLargeRandpermThreshold) {
    randperm_inside_out_loop(out.data(), n, seed32);
  } else {
    randperm_swap_loop(out.data(), n, seed32);
  }
  return out;
}

}  // namespace shardlens

#include "core/torchsem/randperm.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "core/vocabulary/block_mt19937.h"
#include "core/vocabulary/huge_pages.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

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
  const bool suffix_ok = p2 == end || *p2 == '.' || *p2 == '+' || (*p2 >= 'a' && *p2 <= 'z') ||
                         (*p2 >= 'A' && *p2 <= 'Z');
  if (e2 != std::errc() || !suffix_ok || v.major < 1 || v.minor < 0) {
    throw InputError("--torch-version: '" + text + "' is not a version like 1.13 or 2.7");
  }
  return v;
}

std::optional<TorchVersion> TorchVersion::parse_recorded(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return std::nullopt;
  const size_t last = text.find_last_not_of(" \t\r\n");
  try {
    return parse(text.substr(first, last - first + 1));
  } catch (const InputError&) {
    return std::nullopt;
  }
}

std::string TorchVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

namespace {

thread_local DrawWatch* t_watch = nullptr;

// Between chunks of kTick positions: the watcher sees how far the loop is and may stop it.
constexpr int64_t kTick = int64_t(1) << 16;
void tick(int64_t done) {
  if (!t_watch) return;
  t_watch->done.store(done, std::memory_order_relaxed);
  if (t_watch->cancel.load(std::memory_order_relaxed)) throw Cancelled();
}

// Both loops swap with a position chosen by draws that do not depend on the array, so each
// block's targets are computed first and prefetched a fixed distance ahead of the swaps:
// the loops are bound by cache misses, not arithmetic.
constexpr int64_t kBlock = 256;
constexpr int64_t kAhead = 32;  // swaps in flight: enough to cover a DRAM miss

// torch.randperm for n < 2^32 on CPU (aten/src/ATen/native/TensorFactories.cpp): swap each
// position with a later one chosen by one 32-bit draw.
void swap_loop(uint32_t* out, int64_t n, BlockMt19937& gen) {
  std::iota(out, out + n, 0u);
  uint32_t targets[kBlock];
  for (int64_t base = 0; base < n - 1; base += kBlock) {
    if (base % kTick == 0) tick(base);
    const int64_t len = std::min<int64_t>(kBlock, n - 1 - base);
    // n < 2^32, so n - i and the draw both fit 32 bits: a 32-bit division gives the same
    // remainder as torch's 64-bit one, at a fraction of the latency.
    auto remaining = static_cast<uint32_t>(n - base);
    for (int64_t j = 0; j < len; ++j, --remaining) {
      targets[j] = static_cast<uint32_t>(base + j) + gen() % remaining;
    }
    for (int64_t j = 0; j < std::min(kAhead, len); ++j) __builtin_prefetch(out + targets[j], 1);
    for (int64_t j = 0; j < len; ++j) {
      if (j + kAhead < len) __builtin_prefetch(out + targets[j + kAhead], 1);
      std::swap(out[base + j], out[targets[j]]);
    }
  }
}

// PyTorch >= 2.7, n >= UINT32_MAX / 20: the inside-out shuffle with 64-bit draws, each
// position i taking a z <= i drawn as random64() % (i + 1). The element moved to i comes
// from z, so it is read where the next blocks' targets were prefetched.
void inside_out_loop(uint32_t* out, int64_t n, BlockMt19937& gen) {
  uint32_t targets[kBlock];
  for (int64_t base = 0; base < n; base += kBlock) {
    if (base % kTick == 0) tick(base);
    const int64_t len = std::min<int64_t>(kBlock, n - base);
    for (int64_t j = 0; j < len; ++j) {
      const uint32_t hi = gen();  // random64(): the first draw is the high word
      const uint32_t lo = gen();
      // i + 1 <= n < 2^32: the 64-bit remainder from two 32-bit divisions.
      targets[j] = mod_u64_by_u32(hi, lo, static_cast<uint32_t>(base + j + 1));
    }
    for (int64_t j = 0; j < std::min(kAhead, len); ++j) __builtin_prefetch(out + targets[j], 1);
    for (int64_t j = 0; j < len; ++j) {
      if (j + kAhead < len) __builtin_prefetch(out + targets[j + kAhead], 1);
      const uint32_t z = targets[j];
      const auto i = static_cast<uint32_t>(base + j);
      out[i] = out[z];
      out[z] = i;
    }
  }
}

// The generator keeps the low 32 bits of the seed (two's complement for negatives).
uint32_t low32(int64_t seed) {
  return static_cast<uint32_t>(static_cast<uint64_t>(seed));
}

bool inside_out(int64_t n, TorchVersion version) {
  return version.has_large_randperm() && n >= kLargeRandpermThreshold;
}

}  // namespace

ScopedDrawWatch::ScopedDrawWatch(DrawWatch* watch) : m_previous(t_watch) {
  t_watch = watch;
}

ScopedDrawWatch::~ScopedDrawWatch() {
  t_watch = m_previous;
}

void randperm_swap_loop(uint32_t* out, int64_t n, uint32_t seed32) {
  BlockMt19937 gen(seed32);
  swap_loop(out, n, gen);
}

void randperm_inside_out_loop(uint32_t* out, int64_t n, uint32_t seed32) {
  BlockMt19937 gen(seed32);
  inside_out_loop(out, n, gen);
}

std::vector<uint32_t> randperm(int64_t n, int64_t seed, TorchVersion version) {
  return randperm_nth(n, seed, 0, version);
}

std::vector<uint32_t> randperm_nth(int64_t n, int64_t seed, int64_t index, TorchVersion version) {
  if (n < 0 || n > kMaxSamples) {  // the permutation holds 32-bit indices
    throw InputError("randperm: n = " + std::to_string(n) + " is out of range");
  }
  if (index < 0) throw InputError("randperm: the call index must not be negative");
  std::vector<uint32_t> out;
  reserve_huge(out, static_cast<size_t>(n));
  out.resize(static_cast<size_t>(n));
  BlockMt19937 gen(low32(seed));
  // Each earlier call consumed a fixed number of draws: n - 1 (one per swap), or two per
  // position for the inside-out loop.
  const int64_t per_call = inside_out(n, version) ? 2 * n : std::max<int64_t>(n - 1, 0);
  for (int64_t k = 0; k < index * per_call; ++k) gen();
  if (inside_out(n, version)) {
    inside_out_loop(out.data(), n, gen);
  } else {
    swap_loop(out.data(), n, gen);
  }
  return out;
}

int64_t random_int64(int64_t seed, int64_t skip) {
  BlockMt19937 gen(low32(seed));
  for (int64_t k = 0; k < skip; ++k) gen();
  // random64(): the first draw is the high word; int64's random_() keeps it modulo 2^63.
  const uint64_t hi = gen();
  const uint64_t lo = gen();
  return static_cast<int64_t>(((hi << 32) | lo) % (uint64_t{1} << 63));
}

}  // namespace shardlens

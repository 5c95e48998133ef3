#pragma once
// std::mt19937, bit for bit, but producing its output 624 words at a time: the state refill
// and the tempering are straight loops the compiler vectorizes, where
// std::mt19937::operator() pays a branch and a scalar temper per draw. The draws were half of
// randperm's time at n = 10^7. Shared by torch's randperm and the synthetic datasets' shuffle.
#include <cstdint>

namespace shardlens {

class BlockMt19937 {
 public:
  explicit BlockMt19937(uint32_t seed) {
    m_state[0] = seed;
    for (uint32_t i = 1; i < kN; ++i) {
      m_state[i] = 1812433253u * (m_state[i - 1] ^ (m_state[i - 1] >> 30)) + i;
    }
  }

  uint32_t operator()() {
    if (m_next == kN) refill();
    return m_out[m_next++];
  }

 private:
  static constexpr uint32_t kN = 624, kM = 397;

  static uint32_t twist(uint32_t upper, uint32_t lower, uint32_t far) {
    const uint32_t y = (upper & 0x80000000u) | (lower & 0x7fffffffu);
    return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
  }

  void refill() {
    uint32_t* mt = m_state;
    // Split where mt[i + kM] wraps round to already-updated words; each part reads only
    // words at least 227 away from the ones it writes, so it vectorizes.
    for (uint32_t i = 0; i < kN - kM; ++i) mt[i] = twist(mt[i], mt[i + 1], mt[i + kM]);
    for (uint32_t i = kN - kM; i < kN - 1; ++i) {
      mt[i] = twist(mt[i], mt[i + 1], mt[i + kM - kN]);
    }
    mt[kN - 1] = twist(mt[kN - 1], mt[0], mt[kM - 1]);
    for (uint32_t i = 0; i < kN; ++i) {
      uint32_t y = mt[i];
      y ^= y >> 11;
      y ^= (y << 7) & 0x9d2c5680u;
      y ^= (y << 15) & 0xefc60000u;
      y ^= y >> 18;
      m_out[i] = y;
    }
    m_next = 0;
  }

  uint32_t m_state[kN];
  uint32_t m_out[kN];
  uint32_t m_next = kN;  // std::mt19937 also refills before its first draw
};

// (hi * 2^32 + lo) mod d for d > 0, as the 64-bit `%` gives it, by two 32-bit divisions
// (hi mod d first, then a 64-by-32 division whose quotient fits 32 bits): on x86 one 64-bit
// division costs about what both do, and the first one is often skipped (hi < d).
inline uint32_t mod_u64_by_u32(uint32_t hi, uint32_t lo, uint32_t d) {
#if defined(__x86_64__)
  const uint32_t high = hi < d ? hi : hi % d;
  uint32_t quotient, remainder;
  __asm__("divl %4" : "=a"(quotient), "=d"(remainder) : "a"(lo), "d"(high), "rm"(d) : "cc");
  (void)quotient;
  return remainder;
#else
  return static_cast<uint32_t>(((uint64_t{hi} << 32) | lo) % d);
#endif
}

}  // namespace shardlens

#pragma once
// Bit-exact reproduction of torch.randperm(n, generator=g) on CPU after g.manual_seed(seed).
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlens {

// The torch ShardLens imitates when nothing says which: the release pinned in
// requirements/frameworks.txt, i.e. a current torch from pip, which is what most users run
// (Debian's 1.13 is the exception). The choice matters only for n >= kLargeRandpermThreshold,
// where every torch >= 2.7 shuffles alike and older ones differently. A run's recorded
// version (run file meta, a dump's settings) overrides it: TorchVersion::parse_recorded.
// tests/frameworks/torch2_oracle.py checks that the venv's torch agrees with it.
inline constexpr int kDefaultTorchMajor = 2;
inline constexpr int kDefaultTorchMinor = 15;

// Which PyTorch release to imitate. From 2.7 on, n >= kLargeRandpermThreshold uses a
// different shuffle loop (PyTorch PR 144735); below it all versions agree.
struct TorchVersion {
  int major = kDefaultTorchMajor;
  int minor = kDefaultTorchMinor;
  // MAJOR.MINOR with MAJOR >= 1, then nothing, or anything that starts with '.', '+' or a
  // letter: "1.13", "2.7.1", "2.15.0+cu130", "2.8.0a0+gitabc", "2.6rc1", torch.__version__
  // as it is printed. Throws InputError otherwise.
  static TorchVersion parse(const std::string& text);
  // A version a run recorded (run file meta, a dump's "versions": {"torch": ...}): the same
  // rule after trimming spaces; nullopt when empty or unreadable, so an odd text in a user's
  // dump never refuses the import (the default then applies).
  static std::optional<TorchVersion> parse_recorded(const std::string& text);
  std::string to_string() const;
  bool has_large_randperm() const { return major > 2 || (major == 2 && minor >= 7); }
  bool operator==(const TorchVersion&) const = default;
};

inline constexpr int64_t kLargeRandpermThreshold = 214748364;  // UINT32_MAX / 20

// Returns the permutation as 32-bit indices (n must be < 2^32).
std::vector<uint32_t> randperm(int64_t n, int64_t seed, TorchVersion version = {});

// The `index`-th torch.randperm(n, g) (0: the first) after g.manual_seed(seed), every earlier
// call on g having been a randperm(n) too: a RandomSampler's generator across epochs.
std::vector<uint32_t> randperm_nth(int64_t n, int64_t seed, int64_t index,
                                   TorchVersion version = {});

// int(torch.empty((), dtype=torch.int64).random_()) from a CPU generator seeded `seed`
// (torch.manual_seed(seed)) after `skip` 32-bit draws: how Accelerate and a RandomSampler
// without a generator seed the sampler's generator from the global RNG.
int64_t random_int64(int64_t seed, int64_t skip = 0);

// How far the permutation being drawn on a thread has got, for a caller that waits for that
// thread (a simulation draws its plan on a second core): `done` is the positions shuffled
// so far, and setting `cancel` makes the draw throw Cancelled at its next check (every
// 65,536 positions).
struct DrawWatch {
  std::atomic<int64_t> done{0};
  std::atomic<bool> cancel{false};
};
// Watches the randperm calls of the current thread while it lives.
class ScopedDrawWatch {
 public:
  explicit ScopedDrawWatch(DrawWatch* watch);
  ~ScopedDrawWatch();
  ScopedDrawWatch(const ScopedDrawWatch&) = delete;
  ScopedDrawWatch& operator=(const ScopedDrawWatch&) = delete;

 private:
  DrawWatch* m_previous;
};

// The two loops, exposed for tests.
void randperm_swap_loop(uint32_t* out, int64_t n, uint32_t seed32);
void randperm_inside_out_loop(uint32_t* out, int64_t n, uint32_t seed32);

}  // namespace shardlens

// The CUDA confusion-matrix kernel against a CPU bincount: both kernel paths (shared-memory
// histograms for small C, global atomics for large C), vectorized and scalar loads, sizes
// that are not multiples of the block or of 4, and skipped pairs.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/cuda/cuda_backend.h"
#include "tests/cuda/gpu_test.h"

namespace shardlens::cuda {
namespace {

constexpr int32_t kIgnore = -100;

std::vector<int64_t> cpu_bincount(const std::vector<int32_t>& t, const std::vector<int32_t>& p,
                                  size_t from, int32_t classes) {
  std::vector<int64_t> counts(size_t(classes) * size_t(classes), 0);
  for (size_t i = from; i < t.size(); ++i) {
    if (t[i] == kIgnore || t[i] < 0 || t[i] >= classes || p[i] < 0 || p[i] >= classes) continue;
    ++counts[size_t(t[i]) * size_t(classes) + size_t(p[i])];
  }
  return counts;
}

// Mostly-correct predictions (a hot diagonal, the contended case), a few ignored targets
// and a few out-of-range predictions the kernel must skip.
void make_pairs(int64_t n, int32_t classes, uint32_t seed, std::vector<int32_t>& t,
                std::vector<int32_t>& p) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> cls(0, classes - 1);
  std::uniform_int_distribution<int> pct(0, 99);
  t.resize(size_t(n));
  p.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    t[size_t(i)] = cls(rng);
    p[size_t(i)] = pct(rng) < 80 ? t[size_t(i)] : cls(rng);
    const int odd = pct(rng);
    if (odd == 0) t[size_t(i)] = kIgnore;
    if (odd == 1) p[size_t(i)] = classes;  // out of range
  }
}

TEST(CudaKernel, MatchesCpuBincountFromHost) {
  SHARDLENS_REQUIRE_GPUS(1);
  for (int32_t classes : {2, 10, 1000, 4096}) {
    DeviceConfusion matrix(0, classes);
    EXPECT_EQ(matrix.uses_shared_memory(), classes <= 100) << "C=" << classes;
    for (int64_t n : {0, 1, 3, 255, 256, 257, 1023, 100003, 3000001}) {
      std::vector<int32_t> t, p;
      make_pairs(n, classes, uint32_t(n * 31 + classes), t, p);
      matrix.reset();
      matrix.add(t.data(), p.data(), n, kIgnore);
      ASSERT_EQ(matrix.counts(), cpu_bincount(t, p, 0, classes)) << "C=" << classes << " n=" << n;
    }
  }
}

TEST(CudaKernel, AccumulatesAcrossCalls) {
  SHARDLENS_REQUIRE_GPUS(1);
  DeviceConfusion matrix(0, 10);
  std::vector<int32_t> t, p;
  make_pairs(5001, 10, 7, t, p);
  matrix.add(t.data(), p.data(), 2000, kIgnore);
  matrix.add(t.data() + 2000, p.data() + 2000, 3001, kIgnore);
  EXPECT_EQ(matrix.counts(), cpu_bincount(t, p, 0, 10));
}

TEST(CudaKernel, DevicePairsVectorizedAndMisaligned) {
  SHARDLENS_REQUIRE_GPUS(1);
  for (int32_t classes : {2, 10, 1000, 4096}) {
    const int64_t n = 1 << 22 | 13;  // not a multiple of 4, 256 or the grid
    DevicePairs pairs(0, n);
    pairs.fill_random(classes, 0x5eed + uint64_t(classes), 0.7);
    std::vector<int32_t> t, p;
    pairs.download(t, p);
    DeviceConfusion matrix(0, classes);
    matrix.add(pairs, kIgnore);  // 16-byte aligned: int4 loads
    ASSERT_EQ(matrix.counts(), cpu_bincount(t, p, 0, classes)) << "C=" << classes;
    matrix.reset();
    // One element in: the scalar path.
    matrix.add_device(pairs.targets() + 1, pairs.predictions() + 1, n - 1, kIgnore);
    ASSERT_EQ(matrix.counts(), cpu_bincount(t, p, 1, classes)) << "C=" << classes;
  }
}

TEST(CudaKernel, IgnoreIndexInsideTheClassRange) {
  SHARDLENS_REQUIRE_GPUS(1);
  std::vector<int32_t> t = {0, 1, 2, 2, 1, 0}, p = {0, 1, 2, 0, 1, 2};
  DeviceConfusion matrix(0, 3);
  matrix.add(t.data(), p.data(), int64_t(t.size()), 2);
  EXPECT_EQ(matrix.counts(), (std::vector<int64_t>{1, 0, 1, 0, 2, 0, 0, 0, 0}));
}

TEST(CudaKernel, DeviceInfoHasAPeak) {
  SHARDLENS_REQUIRE_GPUS(1);
  const DeviceInfo info = device_info(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(info.peak_bandwidth_gbs, 0) << info.name << ": " << info.peak_source;
}

}  // namespace
}  // namespace shardlens::cuda

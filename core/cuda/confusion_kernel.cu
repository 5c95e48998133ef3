// The confusion-matrix kernel and its device buffers.
//
// Reading the (target, prediction) pairs is the whole cost: 8 bytes per pair from DRAM, one
// counter increment each. So the kernel streams both arrays with 16-byte loads that bypass
// cache retention, and counts where the increment is cheapest:
//  - C x C 32-bit counters fit in a block's shared memory: each block counts into private
//    shared histograms (several replicas when small, so the warps of a block do not all
//    hammer the same diagonal cells) and adds them to the 64-bit global counts once;
//  - otherwise the diagonal (C counters; where a trained classifier puts most pairs) is
//    privatized in shared memory the same way, and every other pair is one 64-bit atomic on
//    the global matrix: off-diagonal pairs are few and spread over many cells.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda/confusion_impl.h"
#include "core/cuda/cuda_backend.h"
#include "core/cuda/cuda_check.h"

namespace shardlens::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;
// Pairs per launch at most, so no block's 32-bit shared counter can overflow (a block sees
// at most every pair of its launch). A multiple of 4 keeps later chunks 16-byte aligned.
constexpr int64_t kMaxPairsPerLaunch = int64_t(1) << 30;
constexpr int kMaxReplicas = 8;
constexpr size_t kReplicaBudget = 48 * 1024;         // bytes of shared memory worth replicating
constexpr int64_t kStagingPairs = int64_t(1) << 24;  // host pairs copied per step

__device__ __forceinline__ bool counted(int32_t t, int32_t p, int32_t classes, int32_t ignore) {
  return t != ignore && static_cast<uint32_t>(t) < static_cast<uint32_t>(classes) &&
         static_cast<uint32_t>(p) < static_cast<uint32_t>(classes);
}

// Grid-stride walk over the pairs; kVectorized reads 4 pairs per load (both arrays 16-byte
// aligned) and finishes the last n % 4 with scalar loads. __ldcs: read once, do not keep.
template <bool kVectorized, class Visit>
__device__ __forceinline__ void for_each_pair(const int32_t* __restrict__ targets,
                                              const int32_t* __restrict__ predictions, int64_t n,
                                              Visit visit) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t scalar_from = 0;
  if constexpr (kVectorized) {
    const int64_t quads = n / 4;
    const int4* t4 = reinterpret_cast<const int4*>(targets);
    const int4* p4 = reinterpret_cast<const int4*>(predictions);
    for (int64_t i = first; i < quads; i += stride) {
      const int4 t = __ldcs(t4 + i);
      const int4 p = __ldcs(p4 + i);
      visit(t.x, p.x);
      visit(t.y, p.y);
      visit(t.z, p.z);
      visit(t.w, p.w);
    }
    scalar_from = quads * 4;
  }
  for (int64_t i = scalar_from + first; i < n; i += stride) {
    visit(__ldcs(targets + i), __ldcs(predictions + i));
  }
}

template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
    accumulate_shared(const int32_t* __restrict__ targets, const int32_t* __restrict__ predictions,
                      int64_t n, int32_t classes, int32_t ignore, int replicas,
                      unsigned long long* __restrict__ counts) {
  extern __shared__ unsigned int histograms[];
  const int bins = classes * classes;
  for (int i = threadIdx.x; i < replicas * bins; i += blockDim.x) histograms[i] = 0u;
  __syncthreads();
  unsigned int* mine = histograms + (threadIdx.x / kWarp) % replicas * bins;
  for_each_pair<kVectorized>(targets, predictions, n, [&](int32_t t, int32_t p) {
    if (counted(t, p, classes, ignore)) atomicAdd(mine + t * classes + p, 1u);
  });
  __syncthreads();
  for (int bin = threadIdx.x; bin < bins; bin += blockDim.x) {
    unsigned long long sum = 0;
    for (int r = 0; r < replicas; ++r) sum += histograms[r * bins + bin];
    if (sum != 0) atomicAdd(counts + bin, sum);
  }
}

// private_diagonal: count t == p in a shared array of C counters (dynamic shared memory of
// C * 4 bytes) and flush it once per block.
template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
    accumulate_global(const int32_t* __restrict__ targets, const int32_t* __restrict__ predictions,
                      int64_t n, int32_t classes, int32_t ignore, bool private_diagonal,
                      unsigned long long* __restrict__ counts) {
  extern __shared__ unsigned int diagonal[];
  if (private_diagonal) {
    for (int i = threadIdx.x; i < classes; i += blockDim.x) diagonal[i] = 0u;
    __syncthreads();
  }
  for_each_pair<kVectorized>(targets, predictions, n, [&](int32_t t, int32_t p) {
    if (!counted(t, p, classes, ignore)) return;
    if (private_diagonal && t == p) {
      atomicAdd(diagonal + t, 1u);
    } else {
      atomicAdd(counts + (int64_t(t) * classes + p), 1ull);
    }
  });
  if (private_diagonal) {
    __syncthreads();
    for (int c = threadIdx.x; c < classes; c += blockDim.x) {
      if (diagonal[c] != 0u) {
        atomicAdd(counts + (int64_t(c) * classes + c), (unsigned long long)diagonal[c]);
      }
    }
  }
}

// SplitMix64's finalizer: a cheap, well-mixed hash of the pair index for synthetic data.
__device__ __forceinline__ uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_pairs(int32_t* targets, int32_t* predictions, int64_t n, int32_t classes,
                           uint64_t seed, uint64_t correct_below) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint64_t a = mix64(seed ^ (2 * uint64_t(i)));
    const uint64_t b = mix64(seed ^ (2 * uint64_t(i) + 1));
    const int32_t t = int32_t((a >> 32) % uint64_t(classes));
    const bool correct = (a & 0xffffffffull) < correct_below;
    targets[i] = t;
    predictions[i] = correct ? t : int32_t((b >> 32) % uint64_t(classes));
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

int resident_blocks(const void* kernel, size_t shared_bytes, int device) {
  int per_sm = 0, sms = 0;
  SHARDLENS_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, shared_bytes));
  SHARDLENS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return per_sm * sms;
}

}  // namespace

// --- DeviceConfusion -----------------------------------------------------------------------

DeviceConfusion::Impl::~Impl() {
  // Frees whatever the constructor got to; errors are ignored (nothing sensible to do).
  if (counts || stream || staging_targets) cudaSetDevice(device);
  if (stream) cudaStreamSynchronize(stream);
  cudaFree(counts);
  cudaFree(staging_targets);
  cudaFree(staging_predictions);
  if (stream) cudaStreamDestroy(stream);
}

DeviceConfusion::DeviceConfusion(int device, int32_t classes)
    : m_impl(std::make_unique<Impl>()), m_classes(classes) {
  // 46340^2 is the largest square an int holds; the shared path indexes with int.
  if (classes < 1 || classes > 46340) {
    throw CudaError("DeviceConfusion: classes must be in [1, 46340], got " +
                    std::to_string(classes));
  }
  Impl& d = *m_impl;
  d.device = device;
  d.classes = classes;
  d.bins = size_t(classes) * size_t(classes);
  SHARDLENS_CUDA_CHECK(cudaSetDevice(device));
  SHARDLENS_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  SHARDLENS_CUDA_CHECK(cudaMalloc(&d.counts, d.bins * sizeof(unsigned long long)));
  SHARDLENS_CUDA_CHECK(cudaMemsetAsync(d.counts, 0, d.bins * sizeof(unsigned long long), d.stream));

  int optin = 0;
  SHARDLENS_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const size_t one = d.bins * sizeof(unsigned int);
  if (one <= size_t(optin)) {
    d.replicas = int(std::clamp<size_t>(kReplicaBudget / one, 1, kMaxReplicas));
    d.shared_bytes = size_t(d.replicas) * one;
    // Above 48 KiB a kernel must opt in to the larger dynamic shared memory.
    for (const void* k : {reinterpret_cast<const void*>(&accumulate_shared<true>),
                          reinterpret_cast<const void*>(&accumulate_shared<false>)}) {
      SHARDLENS_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                int(d.shared_bytes)));
    }
    d.max_blocks = resident_blocks(reinterpret_cast<const void*>(&accumulate_shared<true>),
                                   d.shared_bytes, device);
    d.shared = d.max_blocks > 0;
  }
  if (!d.shared) {
    d.replicas = 1;
    d.private_diagonal = size_t(classes) * sizeof(unsigned int) <= kReplicaBudget;
    d.shared_bytes = d.private_diagonal ? size_t(classes) * sizeof(unsigned int) : 0;
    d.max_blocks = resident_blocks(reinterpret_cast<const void*>(&accumulate_global<true>),
                                   d.shared_bytes, device);
  }
  d.max_blocks = std::max(d.max_blocks, 1);
}

DeviceConfusion::~DeviceConfusion() = default;

bool DeviceConfusion::uses_shared_memory() const {
  return m_impl->shared;
}

void DeviceConfusion::add_device(const int32_t* targets, const int32_t* predictions, int64_t n,
                                 int32_t ignore_index) {
  Impl& d = *m_impl;
  SHARDLENS_CUDA_CHECK(cudaSetDevice(d.device));
  for (int64_t offset = 0; offset < n; offset += kMaxPairsPerLaunch) {
    const int64_t len = std::min(kMaxPairsPerLaunch, n - offset);
    const int32_t* t = targets + offset;
    const int32_t* p = predictions + offset;
    const bool vectorized = aligned16(t) && aligned16(p);
    const int64_t work = vectorized ? std::max<int64_t>(len / 4, 1) : len;
    const int blocks = int(std::min<int64_t>(d.max_blocks, (work + kThreads - 1) / kThreads));
    if (d.shared) {
      auto kernel = vectorized ? accumulate_shared<true> : accumulate_shared<false>;
      kernel<<<blocks, kThreads, d.shared_bytes, d.stream>>>(t, p, len, d.classes, ignore_index,
                                                             d.replicas, d.counts);
    } else {
      auto kernel = vectorized ? accumulate_global<true> : accumulate_global<false>;
      kernel<<<blocks, kThreads, d.shared_bytes, d.stream>>>(t, p, len, d.classes, ignore_index,
                                                             d.private_diagonal, d.counts);
    }
    SHARDLENS_CUDA_CHECK(cudaGetLastError());
  }
}

void DeviceConfusion::add(const int32_t* targets, const int32_t* predictions, int64_t n,
                          int32_t ignore_index) {
  Impl& d = *m_impl;
  SHARDLENS_CUDA_CHECK(cudaSetDevice(d.device));
  const int64_t step = std::min(n, kStagingPairs);
  if (step > d.staging_size) {
    SHARDLENS_CUDA_CHECK(cudaStreamSynchronize(d.stream));
    SHARDLENS_CUDA_CHECK(cudaFree(d.staging_targets));
    SHARDLENS_CUDA_CHECK(cudaFree(d.staging_predictions));
    d.staging_targets = d.staging_predictions = nullptr;
    d.staging_size = 0;
    SHARDLENS_CUDA_CHECK(cudaMalloc(&d.staging_targets, size_t(step) * sizeof(int32_t)));
    SHARDLENS_CUDA_CHECK(cudaMalloc(&d.staging_predictions, size_t(step) * sizeof(int32_t)));
    d.staging_size = step;
  }
  // Stream order makes each copy wait for the kernel still reading the previous chunk.
  for (int64_t offset = 0; offset < n; offset += step) {
    const int64_t len = std::min(step, n - offset);
    SHARDLENS_CUDA_CHECK(cudaMemcpyAsync(d.staging_targets, targets + offset,
                                         size_t(len) * sizeof(int32_t), cudaMemcpyHostToDevice,
                                         d.stream));
    SHARDLENS_CUDA_CHECK(cudaMemcpyAsync(d.staging_predictions, predictions + offset,
                                         size_t(len) * sizeof(int32_t), cudaMemcpyHostToDevice,
                                         d.stream));
    add_device(d.staging_targets, d.staging_predictions, len, ignore_index);
  }
}

void DeviceConfusion::add(const DevicePairs& pairs, int32_t ignore_index) {
  if (pairs.device() != m_impl->device)
    throw CudaError("DeviceConfusion::add: the pairs live on another device");
  add_device(pairs.targets(), pairs.predictions(), pairs.size(), ignore_index);
}

void DeviceConfusion::reset() {
  Impl& d = *m_impl;
  SHARDLENS_CUDA_CHECK(cudaSetDevice(d.device));
  SHARDLENS_CUDA_CHECK(cudaMemsetAsync(d.counts, 0, d.bins * sizeof(unsigned long long), d.stream));
}

void DeviceConfusion::synchronize() {
  SHARDLENS_CUDA_CHECK(cudaSetDevice(m_impl->device));
  SHARDLENS_CUDA_CHECK(cudaStreamSynchronize(m_impl->stream));
}

std::vector<int64_t> DeviceConfusion::counts() {
  Impl& d = *m_impl;
  std::vector<unsigned long long> raw(d.bins);
  SHARDLENS_CUDA_CHECK(cudaSetDevice(d.device));
  SHARDLENS_CUDA_CHECK(cudaMemcpyAsync(raw.data(), d.counts, d.bins * sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, d.stream));
  SHARDLENS_CUDA_CHECK(cudaStreamSynchronize(d.stream));
  return std::vector<int64_t>(raw.begin(), raw.end());
}

// --- DevicePairs ---------------------------------------------------------------------------

DevicePairs::DevicePairs(int device, int64_t n) : m_device(device), m_n(n) {
  if (n < 0) throw CudaError("DevicePairs: negative size");
  SHARDLENS_CUDA_CHECK(cudaSetDevice(device));
  const size_t bytes = size_t(std::max<int64_t>(n, 1)) * sizeof(int32_t);
  SHARDLENS_CUDA_CHECK(cudaMalloc(&m_targets, bytes));
  const cudaError_t status = cudaMalloc(&m_predictions, bytes);
  if (status != cudaSuccess) {
    cudaFree(m_targets);
    m_targets = nullptr;
    SHARDLENS_CUDA_CHECK(status);
  }
}

DevicePairs::~DevicePairs() {
  cudaSetDevice(m_device);
  cudaFree(m_targets);
  cudaFree(m_predictions);
}

void DevicePairs::upload(const int32_t* targets, const int32_t* predictions) {
  SHARDLENS_CUDA_CHECK(cudaSetDevice(m_device));
  const size_t bytes = size_t(m_n) * sizeof(int32_t);
  SHARDLENS_CUDA_CHECK(cudaMemcpy(m_targets, targets, bytes, cudaMemcpyHostToDevice));
  SHARDLENS_CUDA_CHECK(cudaMemcpy(m_predictions, predictions, bytes, cudaMemcpyHostToDevice));
}

void DevicePairs::download(std::vector<int32_t>& targets, std::vector<int32_t>& predictions) const {
  SHARDLENS_CUDA_CHECK(cudaSetDevice(m_device));
  targets.resize(size_t(m_n));
  predictions.resize(size_t(m_n));
  const size_t bytes = size_t(m_n) * sizeof(int32_t);
  SHARDLENS_CUDA_CHECK(cudaMemcpy(targets.data(), m_targets, bytes, cudaMemcpyDeviceToHost));
  SHARDLENS_CUDA_CHECK(
      cudaMemcpy(predictions.data(), m_predictions, bytes, cudaMemcpyDeviceToHost));
}

void DevicePairs::fill_random(int32_t classes, uint64_t seed, double accuracy) {
  if (classes < 1) throw CudaError("DevicePairs::fill_random: classes must be >= 1");
  SHARDLENS_CUDA_CHECK(cudaSetDevice(m_device));
  const double a = std::clamp(accuracy, 0.0, 1.0);
  const uint64_t correct_below = uint64_t(a * 4294967296.0);
  int sms = 0;
  SHARDLENS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, m_device));
  const int blocks = int(std::clamp<int64_t>((m_n + kThreads - 1) / kThreads, 1, int64_t(sms) * 8));
  fill_pairs<<<blocks, kThreads>>>(m_targets, m_predictions, m_n, classes, seed, correct_below);
  SHARDLENS_CUDA_CHECK(cudaGetLastError());
  SHARDLENS_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace shardlens::cuda

#pragma once
// The CUDA + NCCL backend of real runs (`shardlens-cli run --backend nccl`) behind a header
// with no CUDA or NCCL types, so core/torch, the CLI, tests and benchmarks compile with the
// plain C++ compiler and only core/cuda includes CUDA headers.
//
// The CUDA runtime is linked statically and NCCL is loaded with dlopen on first use, so a
// binary built with this backend still starts on a machine without a GPU driver or NCCL;
// device_count() then answers 0 and the backend refuses to start with a clear message.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardlens::cuda {

// A CUDA or NCCL call failed (or a collective timed out); the message names the call.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Visible CUDA devices; 0 when there is none or no usable driver. Never throws. When it
// answers 0 and `why` is given, *why says what the runtime reported.
int device_count(std::string* why = nullptr);

struct DeviceInfo {
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  int64_t total_memory = 0;  // bytes
  int64_t free_memory = 0;   // bytes, at the time of the call
  // Theoretical DRAM bandwidth in GB/s (1e9 bytes/s): memory clock x bus width x 2 (double
  // data rate) from the device attributes, or a table by name when those read 0.
  double peak_bandwidth_gbs = 0;
  std::string peak_source;  // "device attributes", "table (NAME)" or "unknown"
};
DeviceInfo device_info(int device);

// (target, prediction) pairs held on a device: the kernel's input when the data already
// lives there (the benchmark, tests of the device path).
class DevicePairs {
 public:
  DevicePairs(int device, int64_t n);
  ~DevicePairs();
  DevicePairs(const DevicePairs&) = delete;
  DevicePairs& operator=(const DevicePairs&) = delete;

  int64_t size() const { return m_n; }
  int device() const { return m_device; }
  const int32_t* targets() const { return m_targets; }  // device pointers
  const int32_t* predictions() const { return m_predictions; }

  void upload(const int32_t* targets, const int32_t* predictions);  // n host values each
  void download(std::vector<int32_t>& targets, std::vector<int32_t>& predictions) const;
  // Pseudo-random pairs generated on the device (deterministic in seed): target uniform in
  // [0, classes), prediction equal to it with probability `accuracy`, else uniform.
  void fill_random(int32_t classes, uint64_t seed, double accuracy);

 private:
  int m_device = 0;
  int64_t m_n = 0;
  int32_t* m_targets = nullptr;
  int32_t* m_predictions = nullptr;
};

// A C x C confusion matrix of 64-bit counts accumulated on a device by a CUDA kernel:
// cell (target, prediction) counts the pairs with that target and prediction. Pairs whose
// target equals ignore_index, or whose target or prediction is outside [0, C), are skipped
// (the CPU accumulation skips ignore_index; the range check keeps bad input off the device's
// memory).
class DeviceConfusion {
 public:
  DeviceConfusion(int device, int32_t classes);
  ~DeviceConfusion();
  DeviceConfusion(const DeviceConfusion&) = delete;
  DeviceConfusion& operator=(const DeviceConfusion&) = delete;

  int32_t classes() const { return m_classes; }
  // True when C x C 32-bit counters fit in one block's shared memory, so each block counts
  // in a private histogram and flushes once; otherwise every pair is a global atomic.
  bool uses_shared_memory() const;

  void add(const int32_t* targets, const int32_t* predictions, int64_t n,
           int32_t ignore_index = -1);  // host arrays, copied to the device
  void add(const DevicePairs& pairs, int32_t ignore_index = -1);
  void add_device(const int32_t* targets, const int32_t* predictions, int64_t n,
                  int32_t ignore_index = -1);  // device arrays of this device
  void reset();
  void synchronize();
  std::vector<int64_t> counts();  // row-major C x C; waits for the device

 private:
  friend class NcclComm;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  int32_t m_classes = 0;
};

// Where NCCL's bootstrap id travels: a c10d store seen through two functions (core/torch
// wires them to the run's store). get blocks until the key exists or the store times out.
struct BootstrapStore {
  std::function<void(const std::string&, const std::vector<uint8_t>&)> set;
  std::function<std::vector<uint8_t>(const std::string&)> get;
};

// One rank's NCCL communicator on `device`. Rank 0 creates the ncclUniqueId and sets it in
// the store under `key`; the others get it. Every collective is bounded by `timeout_s`: NCCL
// runs non-blocking and the communicator is aborted when a peer does not show up, so a dead
// rank ends the run with an error instead of a hang.
class NcclComm {
 public:
  NcclComm(const BootstrapStore& store, const std::string& key, int rank, int world, int device,
           int timeout_s);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const { return m_rank; }
  int world() const { return m_world; }

  // Sum over ranks, in place (host vectors staged through the device).
  void all_reduce_sum(std::vector<int64_t>& values);
  void all_reduce_sum(std::vector<double>& values);
  void all_reduce_sum(std::vector<float>& values);
  // float16 or bfloat16 values given by their bit patterns, summed in that type.
  void all_reduce_sum_16bit(std::vector<uint16_t>& bits, bool bfloat16);
  void all_reduce_sum(DeviceConfusion& counts);  // the device counts themselves, in place
  // Every rank's vector (all the same length) concatenated in rank order.
  std::vector<int64_t> all_gather(const std::vector<int64_t>& mine);
  std::vector<double> all_gather(const std::vector<double>& mine);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  int m_rank = 0;
  int m_world = 1;
};

// "2.28.9", or why NCCL cannot be loaded.
std::string nccl_version();

}  // namespace shardlens::cuda

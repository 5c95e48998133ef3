// One rank's NCCL communicator, bootstrapped through the run's c10d store and bounded by the
// run's timeout: the communicator is non-blocking, so this thread polls for completion and
// aborts it when a peer never shows up (a blocking NCCL call would wait forever).
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/cuda/confusion_impl.h"
#include "core/cuda/cuda_backend.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/nccl_api.h"

namespace shardlens::cuda {

using Clock = std::chrono::steady_clock;

struct NcclComm::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;
  std::chrono::seconds timeout{60};
  bool broken = false;  // aborted: no further collective may run on it
  void* buffer = nullptr;
  size_t buffer_bytes = 0;

  std::string describe(ncclResult_t r) const {
    std::string text = nccl().error_string(r);
    const char* last = comm ? nccl().last_error(comm) : nullptr;
    if (last && *last) text += ": " + std::string(last);
    return text;
  }

  [[noreturn]] void fail(const std::string& what, const std::string& why) {
    if (comm) nccl().abort(comm);
    comm = nullptr;
    broken = true;
    throw CudaError("NCCL " + what + " failed: " + why);
  }

  // Waits until the communicator is no longer busy with an enqueue or its initialization.
  void wait_idle(const std::string& what, Clock::time_point deadline) {
    for (;;) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t r = nccl().get_async_error(comm, &state);
      if (r != ncclSuccess) fail(what, describe(r));
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) fail(what, describe(state));
      if (Clock::now() > deadline) fail(what, "timed out (did every rank take part?)");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  // Waits for everything queued on the stream, watching NCCL for errors and the deadline.
  void wait_stream(const std::string& what, Clock::time_point deadline) {
    for (;;) {
      const cudaError_t s = cudaStreamQuery(stream);
      if (s == cudaSuccess) return;
      if (s != cudaErrorNotReady) {
        cudaGetLastError();
        fail(what, std::string("CUDA: ") + cudaGetErrorString(s));
      }
      ncclResult_t state = ncclSuccess;
      nccl().get_async_error(comm, &state);
      if (state != ncclSuccess && state != ncclInProgress) fail(what, describe(state));
      if (Clock::now() > deadline) {
        fail(what, "timed out after " + std::to_string(timeout.count()) +
                       " s (did every rank take part?)");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  void ensure_buffer(size_t bytes) {
    if (bytes <= buffer_bytes) return;
    SHARDLENS_CUDA_CHECK(cudaFree(buffer));
    buffer = nullptr;
    buffer_bytes = 0;
    SHARDLENS_CUDA_CHECK(cudaMalloc(&buffer, bytes));
    buffer_bytes = bytes;
  }

  // Runs one collective that `enqueue` puts on the stream, to completion or failure.
  template <class Enqueue>
  void run(const std::string& what, Enqueue enqueue) {
    if (broken) throw CudaError("NCCL " + what + ": the communicator was aborted earlier");
    const auto deadline = Clock::now() + timeout;
    const ncclResult_t r = enqueue();
    if (r != ncclSuccess && r != ncclInProgress) fail(what, describe(r));
    wait_idle(what, deadline);
    wait_stream(what, deadline);
  }

  template <class T>
  void all_reduce(std::vector<T>& values, ncclDataType_t type) {
    if (values.empty()) return;
    SHARDLENS_CUDA_CHECK(cudaSetDevice(device));
    const size_t bytes = values.size() * sizeof(T);
    ensure_buffer(bytes);
    SHARDLENS_CUDA_CHECK(
        cudaMemcpyAsync(buffer, values.data(), bytes, cudaMemcpyHostToDevice, stream));
    run("all_reduce", [&] {
      return nccl().all_reduce(buffer, buffer, values.size(), type, ncclSum, comm, stream);
    });
    SHARDLENS_CUDA_CHECK(
        cudaMemcpyAsync(values.data(), buffer, bytes, cudaMemcpyDeviceToHost, stream));
    SHARDLENS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  template <class T>
  std::vector<T> all_gather(const std::vector<T>& mine, ncclDataType_t type, int rank, int world) {
    std::vector<T> all(mine.size() * size_t(world));
    if (mine.empty()) return all;
    SHARDLENS_CUDA_CHECK(cudaSetDevice(device));
    const size_t bytes = mine.size() * sizeof(T);
    ensure_buffer(bytes * size_t(world));
    // In place: NCCL wants this rank's part already at its slot of the receive buffer.
    char* slot = static_cast<char*>(buffer) + bytes * size_t(rank);
    SHARDLENS_CUDA_CHECK(cudaMemcpyAsync(slot, mine.data(), bytes, cudaMemcpyHostToDevice, stream));
    run("all_gather",
        [&] { return nccl().all_gather(slot, buffer, mine.size(), type, comm, stream); });
    SHARDLENS_CUDA_CHECK(
        cudaMemcpyAsync(all.data(), buffer, bytes * size_t(world), cudaMemcpyDeviceToHost, stream));
    SHARDLENS_CUDA_CHECK(cudaStreamSynchronize(stream));
    return all;
  }

  ~Impl() {
    if (comm) {
      // A clean finalize flushes outstanding work; if that cannot finish in time, abort.
      const ncclResult_t f = nccl().finalize(comm);
      bool clean = f == ncclSuccess || f == ncclInProgress;
      const auto deadline = Clock::now() + timeout;
      while (clean) {
        ncclResult_t state = ncclSuccess;
        if (nccl().get_async_error(comm, &state) != ncclSuccess) state = ncclInternalError;
        if (state == ncclSuccess) break;
        if (state != ncclInProgress || Clock::now() > deadline) {
          clean = false;
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      if (clean) {
        nccl().destroy(comm);
      } else {
        nccl().abort(comm);
      }
    }
    cudaSetDevice(device);
    cudaFree(buffer);
    if (stream) cudaStreamDestroy(stream);
  }
};

NcclComm::NcclComm(const BootstrapStore& store, const std::string& key, int rank, int world,
                   int device, int timeout_s)
    : m_impl(std::make_unique<Impl>()), m_rank(rank), m_world(world) {
  const NcclApi& api = nccl();  // throws when NCCL cannot be loaded
  Impl& d = *m_impl;
  d.device = device;
  d.timeout = std::chrono::seconds(timeout_s);
  SHARDLENS_CUDA_CHECK(cudaSetDevice(device));

  ncclUniqueId id;
  static_assert(sizeof(id) == NCCL_UNIQUE_ID_BYTES);
  if (rank == 0) {
    const ncclResult_t r = api.get_unique_id(&id);
    if (r != ncclSuccess) throw CudaError(std::string("ncclGetUniqueId: ") + api.error_string(r));
    const auto* bytes = reinterpret_cast<const uint8_t*>(&id);
    store.set(key, std::vector<uint8_t>(bytes, bytes + sizeof(id)));
  } else {
    const std::vector<uint8_t> bytes = store.get(key);  // bounded by the store's timeout
    if (bytes.size() != sizeof(id))
      throw CudaError("NCCL bootstrap: the store holds a malformed id under " + key);
    std::memcpy(&id, bytes.data(), sizeof(id));
  }

  SHARDLENS_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // returns at once; wait_idle polls with the run's deadline
  const auto deadline = Clock::now() + d.timeout;
  const ncclResult_t r = api.init_rank_config(&d.comm, world, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    d.comm = nullptr;  // nothing usable to abort
    throw CudaError(std::string("NCCL init (rank ") + std::to_string(rank) +
                    ") failed: " + api.error_string(r));
  }
  d.wait_idle("init (rank " + std::to_string(rank) + " of " + std::to_string(world) + ")",
              deadline);
}

NcclComm::~NcclComm() = default;

void NcclComm::all_reduce_sum(std::vector<int64_t>& values) {
  m_impl->all_reduce(values, ncclInt64);
}

void NcclComm::all_reduce_sum(std::vector<double>& values) {
  m_impl->all_reduce(values, ncclFloat64);
}

void NcclComm::all_reduce_sum(std::vector<float>& values) {
  m_impl->all_reduce(values, ncclFloat32);
}

void NcclComm::all_reduce_sum_16bit(std::vector<uint16_t>& bits, bool bfloat16) {
  m_impl->all_reduce(bits, bfloat16 ? ncclBfloat16 : ncclFloat16);
}

void NcclComm::all_reduce_sum(DeviceConfusion& counts) {
  DeviceConfusion::Impl& m = *counts.m_impl;
  if (m.device != m_impl->device)
    throw CudaError("NCCL all_reduce: the matrix lives on another device than the communicator");
  counts.synchronize();  // the kernel ran on the matrix's own stream
  SHARDLENS_CUDA_CHECK(cudaSetDevice(m_impl->device));
  m_impl->run("all_reduce of the confusion matrix", [&] {
    return nccl().all_reduce(m.counts, m.counts, m.bins, ncclUint64, ncclSum, m_impl->comm,
                             m_impl->stream);
  });
}

std::vector<int64_t> NcclComm::all_gather(const std::vector<int64_t>& mine) {
  return m_impl->all_gather(mine, ncclInt64, m_rank, m_world);
}

std::vector<double> NcclComm::all_gather(const std::vector<double>& mine) {
  return m_impl->all_gather(mine, ncclFloat64, m_rank, m_world);
}

}  // namespace shardlens::cuda

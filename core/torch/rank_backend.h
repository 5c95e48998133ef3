#pragma once
// What one rank of a real run needs from its backend, without LibTorch or CUDA types: the
// collectives a sync strategy performs and how a batch's (target, prediction) pairs are
// counted. Gloo lives in torch_ranks.cpp (LibTorch tensors); NCCL and the CUDA kernel in
// nccl_ranks.cpp, which is compiled only when SHARDLENS_HAS_CUDA.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/counter.h"
#include "core/cuda/cuda_backend.h"

namespace shardlens {

// Collectives across every rank of the run. `what` names the step in error messages.
// Implementations throw std::exception subclasses on failure or timeout.
class RankCollectives {
 public:
  virtual ~RankCollectives() = default;
  // Every rank's vector (all of the same length) concatenated in rank order.
  virtual std::vector<double> all_gather(const std::vector<double>& mine, const char* what) = 0;
  virtual std::vector<int64_t> all_gather(const std::vector<int64_t>& mine, const char* what) = 0;
  virtual void all_reduce_sum(std::vector<double>& values, const char* what) = 0;
  virtual void all_reduce_sum(std::vector<int64_t>& values, const char* what) = 0;
  // Sums a counter matrix over ranks as a tensor of the float `dtype` on the wire, so the
  // collective's own summation order and rounding apply, as they do to a torchmetrics state
  // kept in that dtype. Returns false, values unchanged, when the backend has no sum for the
  // dtype (LibTorch 1.13's Gloo rejects bfloat16).
  virtual bool all_reduce_sum(std::vector<double>& values, CounterDtype dtype,
                              const char* what) = 0;
};

// Counts one batch: cells (C x C, row-major) += pairs, skipping target == ignore_index.
// Without one, the rank counts on the CPU.
class BatchCounter {
 public:
  virtual ~BatchCounter() = default;
  virtual void count(const std::vector<int32_t>& targets, const std::vector<int32_t>& predictions,
                     int32_t ignore_index, std::vector<double>& cells) = 0;
};

// --- NCCL + CUDA (nccl_ranks.cpp; call only when SHARDLENS_HAS_CUDA) ------------------------

// Throws InputError "--backend nccl: no CUDA device available" without a device, or when
// `device` (LOCAL_RANK) is not one of this machine's devices.
void require_cuda_device(int device);

struct NcclRank {
  std::unique_ptr<RankCollectives> collectives;
  std::unique_ptr<BatchCounter> counter;
};
// The rank's NCCL communicator on `device` (bootstrapped through `store`) and its CUDA
// batch counter for `classes` classes.
NcclRank connect_nccl(const cuda::BootstrapStore& store, int rank, int world, int device,
                      int timeout_s, int32_t classes);

}  // namespace shardlens

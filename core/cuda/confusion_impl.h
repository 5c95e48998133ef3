#pragma once
// Internal to core/cuda: the device state behind DeviceConfusion, shared by the kernel's
// file and the NCCL communicator (which all-reduces the counts where they lie).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/cuda/cuda_backend.h"

namespace shardlens::cuda {

struct DeviceConfusion::Impl {
  int device = 0;
  int32_t classes = 0;
  size_t bins = 0;
  unsigned long long* counts = nullptr;  // bins cells on the device
  cudaStream_t stream = nullptr;
  bool shared = false;                 // privatized shared-memory histograms
  bool private_diagonal = false;       // global path: the diagonal still counted in shared memory
  int replicas = 1;                    // shared histograms per block (warps spread over them)
  size_t shared_bytes = 0;             // dynamic shared memory per block
  int max_blocks = 1;                  // resident blocks on the whole device for the chosen kernel
  int32_t* staging_targets = nullptr;  // host pairs pass through here
  int32_t* staging_predictions = nullptr;
  int64_t staging_size = 0;

  ~Impl();
};

}  // namespace shardlens::cuda

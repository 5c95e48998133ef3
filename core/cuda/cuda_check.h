#pragma once
// Internal to core/cuda: turns CUDA runtime errors into CudaError naming the call.
#include <cuda_runtime_api.h>

#include <string>

#include "core/cuda/cuda_backend.h"

namespace shardlens::cuda {

inline void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  // Clear the sticky "last error" of non-fatal failures so later calls report their own.
  cudaGetLastError();
  throw CudaError(std::string(call) + ": " + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ")");
}

}  // namespace shardlens::cuda

#define SHARDLENS_CUDA_CHECK(call) ::shardlens::cuda::check((call), #call)

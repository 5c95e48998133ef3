#pragma once
// Shared by the GPU tests: skip (with the runtime's reason) where there is no CUDA device,
// so the suite passes on CPU-only machines and CI; scripts/gpu/check.sh runs it on a GPU.
#include <gtest/gtest.h>

#include <string>

#include "core/cuda/cuda_backend.h"

namespace shardlens::cuda {

inline int devices_or_skip_reason(std::string& why) {
  return device_count(&why);
}

}  // namespace shardlens::cuda

#define SHARDLENS_REQUIRE_GPUS(n)                                                     \
  do {                                                                                \
    std::string why_;                                                                 \
    const int have_ = ::shardlens::cuda::devices_or_skip_reason(why_);                \
    if (have_ == 0) GTEST_SKIP() << "no CUDA device available (" << why_ << ")";      \
    if (have_ < (n))                                                                  \
      GTEST_SKIP() << "needs " << (n) << " CUDA devices, this machine has " << have_; \
  } while (0)

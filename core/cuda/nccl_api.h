#pragma once
// Internal to core/cuda: NCCL's entry points, loaded with dlopen on first use. Linking
// libnccl directly would make every binary with the CUDA backend (shardlens-cli included)
// refuse to start wherever NCCL is not installed, even for `simulate`; loaded lazily, only
// `--backend nccl` needs it and says so when it is missing.
#include <nccl.h>

#include <string>

namespace shardlens::cuda {

struct NcclApi {
  // decltype of the declarations in nccl.h: the signatures cannot drift from the header.
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) init_rank_config = nullptr;
  decltype(&ncclCommGetAsyncError) get_async_error = nullptr;
  decltype(&ncclCommFinalize) finalize = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;
  std::string load_error;  // empty when every entry point was found
};

// Loaded once per process; check load_error before use (nccl() throws when it is set).
const NcclApi& nccl_api();
const NcclApi& nccl();

}  // namespace shardlens::cuda

// make_rank_backend: the backend a rank asked for by name. Plain C++ (no LibTorch or CUDA
// headers). NCCL exists only in CUDA builds: elsewhere its branches are discarded at
// compile time (if constexpr), so nothing references nccl_ranks.cpp there.
#include "core/torch/rank_backend.h"

#include "core/cuda/cuda_backend.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

// Defined by core/torch/CMakeLists.txt, not config.h: the plugin may be built on its own
// against another build's core (core/torch/standalone), whose config.h says CUDA.
constexpr bool kHasNccl = SHARDLENS_TORCH_WITH_NCCL;

// Throws unless `name` is a backend this build has; answers whether it is NCCL.
bool is_nccl(const std::string& name) {
  if (name == "gloo") return false;
  if (name != "nccl") {
    throw InputError("--backend " + name + ": not a backend (gloo" +
                     std::string(kHasNccl ? " or nccl" : "") + ")");
  }
  if (!kHasNccl) {
    throw InputError("--backend nccl: this build has no CUDA/NCCL backend; use --backend gloo");
  }
  return true;
}

}  // namespace

void check_rank_backend_for_launch(const std::string& name, int world) {
  if (!is_nccl(name)) return;
  if constexpr (kHasNccl) {
    require_cuda_device(0);  // "--backend nccl: no CUDA device available" on CPU machines
    const int devices = cuda::device_count();
    if (world > devices) {
      throw InputError("--backend nccl: --world-size " + std::to_string(world) +
                       " needs one CUDA device per rank; this machine has " +
                       std::to_string(devices));
    }
  }
}

void check_rank_backend_for_rank(const std::string& name, int local_rank) {
  if (!is_nccl(name)) return;
  if constexpr (kHasNccl) require_cuda_device(local_rank);
}

RankBackend make_rank_backend(const std::string& name, const RankConnection& connection) {
  if (!is_nccl(name)) return connect_gloo(connection);
  if constexpr (kHasNccl) {
    try {
      return connect_nccl(connection);
    } catch (const std::exception& e) {
      throw RunFailure("cannot connect to the other ranks over NCCL: " + first_line(e.what()));
    }
  }
  return {};  // not reached: is_nccl throws without NCCL
}

}  // namespace shardlens

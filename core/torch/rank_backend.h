#pragma once
// The collective backends of a rank (`--backend`), chosen by name with make_rank_backend:
// Gloo (gloo_ranks.cpp, LibTorch's ProcessGroupGloo) or NCCL with the CUDA batch counter
// (nccl_ranks.cpp, compiled only when SHARDLENS_HAS_CUDA). No LibTorch or CUDA types here;
// the interfaces are core/realrun/rank_services.h.
#include <string>

#include "core/realrun/rank_services.h"

namespace shardlens {

// Throws InputError when `name` is not a backend of this build, or cannot run `world` ranks
// on this machine (NCCL: one CUDA device per rank), before the launcher starts any.
void check_rank_backend_for_launch(const std::string& name, int world);
// Throws InputError when `name` is not a backend of this build, or a rank cannot use it on
// its device `local_rank` (LOCAL_RANK).
void check_rank_backend_for_rank(const std::string& name, int local_rank);
// Connects this rank to the others: "gloo", or "nccl" in CUDA builds; InputError otherwise
// (a build without CUDA says it has no CUDA/NCCL backend). Throws RunFailure "cannot
// connect to the other ranks ..." when they cannot be reached.
RankBackend make_rank_backend(const std::string& name, const RankConnection& connection);

// --- the backends themselves (make_rank_backend calls them) --------------------------------

// ProcessGroupGloo over the connection's store, which must be a c10d one (c10d_store.h).
RankBackend connect_gloo(const RankConnection& connection);

// NCCL + CUDA (nccl_ranks.cpp; exists only when SHARDLENS_HAS_CUDA).
// Throws InputError "--backend nccl: no CUDA device available" without a device, or when
// `device` (LOCAL_RANK) is not one of this machine's devices.
void require_cuda_device(int device);
// The rank's NCCL communicator on device local_rank (its unique id travels through the
// connection's store under "nccl") and its CUDA batch counter.
RankBackend connect_nccl(const RankConnection& connection);

}  // namespace shardlens

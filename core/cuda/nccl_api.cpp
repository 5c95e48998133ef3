// Loads NCCL with dlopen (see nccl_api.h for why).
#include "core/cuda/nccl_api.h"

#include <dlfcn.h>

#include <type_traits>

#include "core/cuda/cuda_backend.h"

namespace shardlens::cuda {
namespace {

NcclApi load() {
  NcclApi api;
  void* handle = nullptr;
  // The soname first (LD_LIBRARY_PATH, ldconfig), then the library this build found.
  for (const char* name : {"libnccl.so.2", SHARDLENS_NCCL_LIBRARY}) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle) break;
    const char* why = dlerror();
    api.load_error += std::string(api.load_error.empty() ? "" : "; ") + (why ? why : name);
  }
  if (!handle) {
    api.load_error = "cannot load NCCL (" + api.load_error + ")";
    return api;
  }
  api.load_error.clear();
  std::string missing;
  auto bind = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, symbol));
    if (!fn) missing += std::string(missing.empty() ? "" : ", ") + symbol;
  };
  bind(api.get_version, "ncclGetVersion");
  bind(api.get_unique_id, "ncclGetUniqueId");
  bind(api.init_rank_config, "ncclCommInitRankConfig");
  bind(api.get_async_error, "ncclCommGetAsyncError");
  bind(api.finalize, "ncclCommFinalize");
  bind(api.destroy, "ncclCommDestroy");
  bind(api.abort, "ncclCommAbort");
  bind(api.all_reduce, "ncclAllReduce");
  bind(api.all_gather, "ncclAllGather");
  bind(api.error_string, "ncclGetErrorString");
  bind(api.last_error, "ncclGetLastError");
  if (!missing.empty()) api.load_error = "NCCL is too old (missing " + missing + ")";
  return api;
}

}  // namespace

const NcclApi& nccl_api() {
  static const NcclApi api = load();
  return api;
}

const NcclApi& nccl() {
  const NcclApi& api = nccl_api();
  if (!api.load_error.empty()) throw CudaError(api.load_error);
  return api;
}

std::string nccl_version() {
  const NcclApi& api = nccl_api();
  if (!api.load_error.empty()) return api.load_error;
  int code = 0;
  if (api.get_version(&code) != ncclSuccess) return "unknown";
  // NCCL_VERSION_CODE: major*10000 + minor*100 + patch from 2.9 on, major*1000 + ... before.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace shardlens::cuda

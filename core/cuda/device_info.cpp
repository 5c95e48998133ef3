// Device discovery: how many devices there are and what one can do (peak bandwidth for the
// benchmark's "fraction of peak").
#include <dlfcn.h>

#include <algorithm>
#include <string>

#include "core/cuda/cuda_backend.h"
#include "core/cuda/cuda_check.h"

namespace shardlens::cuda {

int device_count(std::string* why) {
  int count = 0;
  // With the static runtime a missing libcuda.so.1 shows up here (not at load time) as
  // cudaErrorInsufficientDriver or cudaErrorNoDevice; both mean "no GPU for us".
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    if (!why) return 0;
    *why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    // "Driver version is insufficient" is also what a machine with no driver at all gets.
    if (status == cudaErrorInsufficientDriver) {
      void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
      if (driver) {
        dlclose(driver);
      } else {
        *why = "no NVIDIA driver: libcuda.so.1 not found";
      }
    }
    return 0;
  }
  if (count == 0 && why) *why = "the CUDA runtime reports 0 devices";
  return count;
}

namespace {

// Datasheet DRAM bandwidths (GB/s) for when the attributes read 0 (some virtualized
// setups). Longest names first so "H100 NVL" wins over "H100".
double table_peak(const std::string& name, std::string& source) {
  struct Row {
    const char* key;
    double gbs;
  };
  static const Row rows[] = {{"H200", 4800}, {"H100 NVL", 3900}, {"H100 PCIe", 2000},
                             {"H100", 3350}, {"GH200", 4000},    {"A100-SXM4-80GB", 2039},
                             {"A100", 1555}, {"L40S", 864},      {"L4", 300}};
  for (const Row& r : rows) {
    if (name.find(r.key) != std::string::npos) {
      source = std::string("table (") + r.key + ")";
      return r.gbs;
    }
  }
  source = "unknown";
  return 0;
}

}  // namespace

DeviceInfo device_info(int device) {
  DeviceInfo info;
  cudaDeviceProp prop{};
  SHARDLENS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
  SHARDLENS_CUDA_CHECK(cudaSetDevice(device));
  size_t free_bytes = 0, total_bytes = 0;
  SHARDLENS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  info.free_memory = static_cast<int64_t>(free_bytes);
  // cudaDeviceProp::memoryClockRate is gone in CUDA 13; the attributes remain.
  int clock_khz = 0, bus_bits = 0;
  SHARDLENS_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
  SHARDLENS_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  if (clock_khz > 0 && bus_bits > 0) {
    info.peak_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    info.peak_source = "device attributes (" + std::to_string(clock_khz / 1000) + " MHz x " +
                       std::to_string(bus_bits) + " bit x 2)";
  } else {
    info.peak_bandwidth_gbs = table_peak(info.name, info.peak_source);
  }
  return info;
}

}  // namespace shardlens::cuda

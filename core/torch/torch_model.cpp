// TorchScript inference: a LibTorch translation unit without c10d (.pt dumps: pt_dump.cpp).
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include "core/io/files.h"
#include "core/torch/model.h"
#include "core/torch/torch_oracle.h"
#include "core/vocabulary/types.h"

namespace shardlens {

struct TorchModel::Impl {
  torch::jit::Module module;
  torch::Device device = torch::kCPU;
};

TorchModel::TorchModel(const std::string& path, const std::string& device)
    : m_impl(std::make_unique<Impl>()), m_path(path) {
  at::set_num_threads(1);
  if (device != "cpu") {
    const int count = torch::cuda::is_available() ? int(torch::cuda::device_count()) : 0;
    const int index = std::stoi(device.substr(device.find(':') + 1));
    if (index >= count) {
      throw InputError("device=" + device + ": " +
                       (count == 0
                            ? std::string("this LibTorch sees no CUDA device")
                            : "this machine has " + std::to_string(count) + " CUDA device(s)") +
                       "; use device=cpu");
    }
    m_impl->device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  try {
    m_impl->module = torch::jit::load(path, m_impl->device);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw InputError(path + ": not a TorchScript model (" + what.substr(0, what.find('\n')) + ")");
  }
  m_impl->module.eval();
}

TorchModel::~TorchModel() = default;

std::vector<int32_t> TorchModel::predict(const uint8_t* pixels, int64_t count, int32_t rows,
                                         int32_t cols, int32_t classes) {
  if (count == 0) return {};
  c10::InferenceMode guard;
  const auto bytes =
      torch::from_blob(const_cast<uint8_t*>(pixels), {count, 1, rows, cols}, torch::kUInt8);
  // Raw [0, 255]: the model normalizes.
  const torch::Tensor input = bytes.to(m_impl->device).to(torch::kFloat32);
  torch::Tensor logits;
  try {
    logits = m_impl->module.forward({input}).toTensor();
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw InputError(m_path + ": the model failed on input [" + std::to_string(count) + ", 1, " +
                     std::to_string(rows) + ", " + std::to_string(cols) + "] (" +
                     what.substr(0, what.find('\n')) + ")");
  }
  if (logits.dim() != 2 || logits.size(0) != count || logits.size(1) != classes) {
    throw InputError(m_path + ": the model returned shape " + c10::str(logits.sizes()) +
                     ", expected [" + std::to_string(count) + ", " + std::to_string(classes) + "]");
  }
  const torch::Tensor pred = logits.argmax(1).to(torch::kCPU).to(torch::kInt32).contiguous();
  const int32_t* p = pred.data_ptr<int32_t>();
  return std::vector<int32_t>(p, p + count);
}

std::string libtorch_version() {
  return TORCH_VERSION;
}

std::vector<int64_t> torch_randperm(int64_t n, int64_t seed) {
  // Python's Generator.manual_seed takes a negative seed as its two's complement.
  at::Generator gen = at::detail::createCPUGenerator(static_cast<uint64_t>(seed));
  const at::Tensor perm = at::randperm(n, gen, at::TensorOptions().dtype(at::kLong));
  const int64_t* p = perm.contiguous().data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + n);
}

}  // namespace shardlens

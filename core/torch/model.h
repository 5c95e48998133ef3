#pragma once
// A TorchScript classifier for real runs: raw pixels [N, 1, H, W] float32 in [0, 255] in,
// logits [N, C] out (the contract of resources/models/fashion_mnist_reference.pt).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/vocabulary/progress.h"

namespace shardlens {

class TorchModel {
 public:
  // Loads the module (eval mode, one intra-op thread so results do not depend on load) onto
  // `device` ("cpu" or "cuda:N"). Throws InputError naming the file when it is not a
  // TorchScript archive, or the device when this LibTorch cannot use it.
  explicit TorchModel(const std::string& path, const std::string& device = "cpu");
  ~TorchModel();
  TorchModel(const TorchModel&) = delete;
  TorchModel& operator=(const TorchModel&) = delete;

  // Predicted classes (argmax of the logits) of `count` images of rows x cols bytes each.
  // Throws InputError when the output is not [count, C] with C == `classes`.
  std::vector<int32_t> predict(const uint8_t* pixels, int64_t count, int32_t rows, int32_t cols,
                               int32_t classes);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  std::string m_path;
};

// The predicted class of every image of an IDX image file (TorchPlugin::predict_images).
std::vector<int32_t> predict_images(const std::string& model_path, const std::string& device,
                                    const std::string& images_path, int32_t classes,
                                    Progress* progress);

// The LibTorch version this build links, e.g. "1.13.0".
std::string libtorch_version();

}  // namespace shardlens

// `model:` predictors: every image of an IDX file through a TorchScript model, batch by
// batch. Plain C++ over model.h (no LibTorch headers), so it compiles fast.
#include "core/io/idx.h"
#include "core/torch/model.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

// Images per forward pass: large enough that per-call overhead vanishes, small enough
// that progress and cancel respond within a fraction of a second on one CPU thread.
constexpr int64_t kPredictBatch = 500;

}  // namespace

std::vector<int32_t> predict_images(const std::string& model_path, const std::string& device,
                                    const std::string& images_path, int32_t classes,
                                    Progress* progress) {
  step(progress, "loading the model", 0.0);
  TorchModel model(model_path, device);
  step(progress, "reading images", 0.0);
  const IdxImages images = read_idx_images(images_path);
  const size_t image_bytes = size_t(images.rows) * size_t(images.cols);
  std::vector<int32_t> out;
  out.reserve(size_t(images.count));
  for (int64_t begin = 0; begin < images.count; begin += kPredictBatch) {
    step(progress, "predicting", double(begin) / double(images.count));
    const int64_t count = std::min(kPredictBatch, images.count - begin);
    const std::vector<int32_t> batch =
        model.predict(images.pixels.data() + size_t(begin) * image_bytes, count, images.rows,
                      images.cols, classes);
    out.insert(out.end(), batch.begin(), batch.end());
  }
  return out;
}

}  // namespace shardlens

#include "core/realrun/model_predictions.h"

#include <cstdlib>
#include <filesystem>

#include "core/dataset/dataset_images.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/sha256.h"
#include "core/realrun/real_run.h"
#include "core/realrun/torch_plugin.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

namespace fs = std::filesystem;

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : "";
}

// The image file of the dataset spec, or an InputError that says why a model cannot be fed.
std::string images_of(const std::string& dataset, const std::string& predictor) {
  if (!dataset_has_inputs(dataset)) {
    throw InputError("--predictor " + predictor + ": the dataset " + dataset +
                     " has labels but no inputs, so there is nothing to feed a model (" +
                     parse_spec(dataset, "--dataset").kind +
                     " labels cannot be fed to one); use fashion-mnist:test|train or "
                     "idx:PATH-labels-idx1-ubyte with its images file next to it");
  }
  return dataset_images_path(dataset);
}

std::vector<int64_t> read_cached(const std::string& path) {
  std::vector<int64_t> out;
  read_npy_integer_column(path, [&](size_t total, size_t, std::span<const int64_t> values) {
    out.reserve(total);
    out.insert(out.end(), values.begin(), values.end());
  });
  return out;
}

}  // namespace

std::string prediction_cache_dir() {
  if (std::string dir = env_or_empty("SHARDLENS_PREDICTION_CACHE"); !dir.empty()) return dir;
  if (std::string xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/shardlens/predictions";
  const std::string home = env_or_empty("HOME");
  return (home.empty() ? std::string("/tmp") : home) + "/.cache/shardlens/predictions";
}

ModelPredictions model_predictions(const ModelPredictorSpec& model, const Labels& labels,
                                   Progress* progress) {
  const std::string predictor = "model:" + model.model_path;
  const std::string images = images_of(labels.source, predictor);
  std::error_code ec;
  if (!fs::is_regular_file(model.model_path, ec))
    throw InputError(model.model_path + ": the model file does not exist");
  step(progress, "hashing the model and the images", 0.0);
  const std::string key = sha256_file_hex(model.model_path) + "-" + sha256_file_hex(images) +
                          (model.device == "cpu" ? "" : "-" + model.device);
  ModelPredictions out;
  out.cache_file = prediction_cache_dir() + "/" + key + ".npy";

  std::vector<int64_t> all;
  if (fs::is_regular_file(out.cache_file, ec)) {
    try {
      all = read_cached(out.cache_file);
      out.from_cache = true;
    } catch (const InputError&) {
      all.clear();  // a damaged cache entry is recomputed and replaced
    }
  }
  if (!out.from_cache) {
    std::string why_not;
    const TorchPlugin* torch = torch_plugin(&why_not);
    if (!torch)
      throw InputError("--predictor " + predictor + ": " + why_not +
                       "; use a recorded predictor (npy:PATH) instead");
    const std::vector<int32_t> predicted =
        torch->predict_images(model.model_path, model.device, images, labels.num_classes, progress);
    all.assign(predicted.begin(), predicted.end());
    try {
      fs::create_directories(prediction_cache_dir(), ec);
      write_file_atomic(out.cache_file, npy_bytes(all, {int64_t(all.size())}));
    } catch (const std::exception&) {
      // An unwritable cache costs the next toggle a recomputation, nothing else.
    }
  }

  // The dataset's own indices: a subset's source indices, else every image in order.
  const int64_t n = labels.size();
  if (labels.source_indices.empty() && int64_t(all.size()) != n) {
    throw InputError(images + ": " + std::to_string(all.size()) + " images for " +
                     std::to_string(n) + " labels");
  }
  out.predictions.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t source = labels.source_indices.empty() ? i : labels.source_indices[size_t(i)];
    if (source >= int64_t(all.size()))
      throw InputError(images + ": no image " + std::to_string(source) + " (the file has " +
                       std::to_string(all.size()) + ")");
    out.predictions[size_t(i)] = static_cast<int32_t>(all[size_t(source)]);
  }
  step(progress, "predicting", 1.0);
  return out;
}

void install_model_predictor() {
  set_model_predictor([](const ModelPredictorSpec& model, const Labels& labels, Progress* p) {
    return model_predictions(model, labels, p).predictions;
  });
}

}  // namespace shardlens

#pragma once
// The `model:` predictor (core/sim/specs.h): a TorchScript model's predicted class of every
// image of a dataset, computed once by the LibTorch plugin and cached on disk, so every
// toggle afterwards costs what a recorded (.npy) predictor costs.
//
// The cache holds one int64 .npy per (model, image file): the prediction of every image of
// the file, named by the SHA-256 of the model file and of the image file (plus the device
// when it is not the CPU), so a subset (first=N, indices=FILE) reuses the full file's
// predictions and a changed model or image file misses. Where: $SHARDLENS_PREDICTION_CACHE,
// else $XDG_CACHE_HOME/shardlens/predictions, else ~/.cache/shardlens/predictions.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dataset/labels.h"
#include "core/sim/specs.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

std::string prediction_cache_dir();

struct ModelPredictions {
  std::vector<int32_t> predictions;  // one per index of the dataset (its subset applied)
  bool from_cache = false;
  std::string cache_file;  // the .npy holding every image's prediction
};

// The predictions of `model` for the dataset `labels` came from (labels.source, a dataset
// spec with images: fashion-mnist:test|train or idx:PATH). Throws InputError when the build
// has no LibTorch plugin, the model does not load (file named), or the dataset has no
// inputs (synthetic, npy and csv labels cannot be fed to a model). Cancelled when asked.
ModelPredictions model_predictions(const ModelPredictorSpec& model, const Labels& labels,
                                   Progress* progress = nullptr);

// Makes `model:` predictor specs work everywhere (set_model_predictor).
void install_model_predictor();

}  // namespace shardlens

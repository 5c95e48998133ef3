#pragma once
// Predictor spec strings, as the CLI and scenario files write them (dataset specs:
// core/dataset/dataset_spec.h):
//   perfect | noisy:accuracy=0.9,seed=1[,structure=adjacent] | npy:PATH | csv:PATH |
//   model:PATH[,device=cpu|cuda:N] (a TorchScript model run on the dataset's images; PATH
//   "reference" is the Fashion-MNIST reference model)
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset/dataset_spec.h"
#include "core/dataset/labels.h"
#include "core/sim/predictor.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

// A `model:` predictor. The model runs in the LibTorch plugin, which this layer does not
// link: core/realrun/model_predictions.h computes (and caches) the predictions and installs
// itself here; the CLI and the GUI do that at start. Without it, `model:` is an InputError.
struct ModelPredictorSpec {
  std::string model_path;      // "reference" already resolved to reference_model_path()
  std::string device = "cpu";  // "cpu" or "cuda:N"
};
using ModelPredictorFn =
    std::function<std::vector<int32_t>(const ModelPredictorSpec&, const Labels&, Progress*)>;
void set_model_predictor(ModelPredictorFn predictor);
// The spec of "model:PATH[,device=...]"; throws InputError for anything else.
ModelPredictorSpec parse_model_predictor(const std::string& spec);
// resource_dir()/models/fashion_mnist_reference.pt (what `run --model` defaults to).
std::string reference_model_path();

// A predictor whose prediction of a sample is a function of its index and true class alone
// (perfect; noisy), so the keys can be computed where the targets are (make_keys_in_place).
struct LabelPredictor {
  std::optional<NoisyParams> noisy;  // absent: perfect
  int32_t predict(int64_t index, int32_t target, int32_t classes) const {
    return noisy ? noisy_prediction(*noisy, index, target, classes) : target;
  }
};
// The perfect and noisy specs (validated: throws InputError as load_predictions does);
// nullopt for predictors that read files or run models.
std::optional<LabelPredictor> label_predictor(const std::string& spec);

std::vector<int32_t> load_predictions(const std::string& spec, const Labels& labels,
                                      Progress* progress = nullptr);

}  // namespace shardlens

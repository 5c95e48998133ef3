#pragma once
// Dataset and predictor spec strings, as the CLI and scenario files write them:
//   dataset:   synthetic:classes=10,per-class=50 | synthetic:counts=3,5,7 |
//              synthetic:classes=10,n=1000,zipf=1.2 | fashion-mnist:test | fashion-mnist:train |
//              idx:PATH | npy:PATH | csv:PATH; every kind takes ",names=PATH" (class names)
//              and ",first=N" or ",indices=FILE.npy" (a subset, indexed from 0 like a
//              torch Subset)
//   predictor: perfect | noisy:accuracy=0.9,seed=1[,structure=adjacent] | npy:PATH | csv:PATH |
//              model:PATH[,device=cpu|cuda:N] (a TorchScript model run on the dataset's
//              images; PATH "reference" is the Fashion-MNIST reference model)
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model/labels.h"
#include "core/model/progress.h"

namespace shardlens {

struct Spec {
  std::string kind;                            // text before the first ':'
  std::string path;                            // for file kinds: text after ':' up to options
  std::map<std::string, std::string> options;  // key=value pairs
};

// Parses "kind:key=value,key=value" or "kind:PATH[,key=value...]". `flag` names the flag in
// errors ("--dataset").
Spec parse_spec(const std::string& text, const std::string& flag);

std::string fashion_mnist_dir();  // /usr/share/datasets/fashion-mnist unless overridden

Labels load_labels(const std::string& spec, Progress* progress = nullptr);
// A `model:` predictor. The model runs in the LibTorch plugin, which this layer does not
// link: core/runs/model_predictions.h computes (and caches) the predictions and installs
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

std::vector<int32_t> load_predictions(const std::string& spec, const Labels& labels,
                                      Progress* progress = nullptr);

}  // namespace shardlens

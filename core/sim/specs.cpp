#include "core/sim/specs.h"

#include <regex>

#include "core/sim/lessons.h"
#include "core/sim/predictor.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

ModelPredictorFn& model_predictor() {
  static ModelPredictorFn predictor;
  return predictor;
}

}  // namespace

void set_model_predictor(ModelPredictorFn predictor) {
  model_predictor() = std::move(predictor);
}

std::string reference_model_path() {
  return resource_dir() + "/models/fashion_mnist_reference.pt";
}

ModelPredictorSpec parse_model_predictor(const std::string& text) {
  const Spec spec = parse_spec(text, "--predictor");
  if (spec.kind != "model") throw InputError("--predictor: '" + text + "' is not model:PATH");
  if (spec.path.empty())
    throw InputError(
        "--predictor: model: needs a TorchScript file (model:PATH or model:reference)");
  spec_allow_only(spec, {"device"}, "--predictor");
  ModelPredictorSpec out;
  out.model_path = spec.path == "reference" ? reference_model_path() : spec.path;
  if (spec.options.count("device")) out.device = spec.options.at("device");
  static const std::regex device("cpu|cuda:[0-9]{1,3}");
  if (!std::regex_match(out.device, device))
    throw InputError("--predictor: device=" + out.device + " is not cpu or cuda:N");
  return out;
}

std::optional<LabelPredictor> label_predictor(const std::string& text) {
  const Spec spec = parse_spec(text, "--predictor");
  if (spec.kind == "perfect") {
    spec_allow_only(spec, {}, "--predictor");
    return LabelPredictor{};
  }
  if (spec.kind != "noisy") return std::nullopt;
  spec_allow_only(spec, {"accuracy", "seed", "structure"}, "--predictor");
  LabelPredictor out;
  NoisyParams& p = out.noisy.emplace();
  if (spec.options.count("accuracy")) p.accuracy = spec_double(spec, "accuracy", "--predictor");
  if (spec.options.count("seed")) {
    p.seed = static_cast<uint64_t>(spec_int(spec, "seed", "--predictor", 0, INT64_MAX));
  }
  if (spec.options.count("structure")) p.structure = spec.options.at("structure");
  validate_noisy(p);
  return out;
}

std::vector<int32_t> load_predictions(const std::string& text, const Labels& labels,
                                      Progress* progress) {
  const Spec spec = parse_spec(text, "--predictor");
  if (spec.kind == "model") {
    const ModelPredictorSpec model = parse_model_predictor(text);
    if (!model_predictor()) {
      throw InputError("--predictor " + text +
                       ": this program cannot run models (no LibTorch predictor installed)");
    }
    std::vector<int32_t> out = model_predictor()(model, labels, progress);
    validate_predictions(out, labels, model.model_path);
    return out;
  }
  if (spec.kind == "perfect") {
    spec_allow_only(spec, {}, "--predictor");
    return predict_perfect(labels);
  }
  if (spec.kind == "noisy") return predict_noisy(labels, *label_predictor(text)->noisy, progress);
  if (spec.kind == "npy" || spec.kind == "csv") {
    spec_allow_only(spec, {}, "--predictor");
    return read_predictions_file(spec, labels);
  }
  throw InputError("--predictor: unknown kind '" + spec.kind +
                   "' (perfect, noisy, npy, csv, model)");
}

}  // namespace shardlens

#include "core/dataset/dataset_images.h"

#include <filesystem>

#include "core/dataset/dataset_spec.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

bool has_inputs(const Spec& spec) {
  return spec.kind == "fashion-mnist" || spec.kind == "idx";
}

}  // namespace

bool dataset_has_inputs(const std::string& dataset_spec) {
  try {
    return has_inputs(parse_spec(dataset_spec, "--dataset"));
  } catch (const InputError&) {
    return false;
  }
}

std::string dataset_images_path(const std::string& dataset_spec) {
  const Spec spec = parse_spec(dataset_spec, "--dataset");
  if (spec.kind == "fashion-mnist") {
    const std::string stem =
        fashion_mnist_dir() +
        (spec.path == "train" ? "/train-images-idx3-ubyte" : "/t10k-images-idx3-ubyte");
    std::error_code ec;
    const bool only_unpacked =
        !std::filesystem::exists(stem + ".gz", ec) && std::filesystem::exists(stem, ec);
    return only_unpacked ? stem : stem + ".gz";
  }
  if (spec.kind == "idx") {
    std::string path = spec.path;
    const size_t at = path.rfind("labels-idx1");
    if (at != std::string::npos) return path.replace(at, 11, "images-idx3");
    throw InputError("--dataset " + dataset_spec +
                     ": cannot tell where the images are; name the labels file *labels-idx1-ubyte* "
                     "next to *images-idx3-ubyte*, or give --images");
  }
  throw InputError("--dataset " + dataset_spec + ": " + spec.kind +
                   " labels have no inputs to feed a model (fashion-mnist:test, "
                   "fashion-mnist:train or idx:PATH-labels-idx1-ubyte have images)");
}

std::string existing_dataset_images(const std::string& dataset_spec) noexcept {
  try {
    std::string path = dataset_images_path(dataset_spec);
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) ? path : std::string();
  } catch (...) {
    return {};
  }
}

}  // namespace shardlens

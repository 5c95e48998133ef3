#pragma once
// The inputs (images) of a dataset spec: which kinds have them and where their file is. One
// rule for the real run, the `model:` predictor and the GUI's sample images.
#include <string>

namespace shardlens {

// Whether the dataset's samples have inputs a model can be fed: fashion-mnist and idx
// datasets (their images file beside the labels); synthetic, npy and csv labels have none.
bool dataset_has_inputs(const std::string& dataset_spec);

// The dataset's images file: fashion-mnist's (the .gz file, or the unpacked one when only it
// exists) or, for idx:PATH, PATH with "labels-idx1" replaced by "images-idx3". Throws
// InputError saying why when the dataset has no inputs or its images cannot be located.
std::string dataset_images_path(const std::string& dataset_spec);

// dataset_images_path() when that file exists, else "" (for views that show images when
// they can); never throws.
std::string existing_dataset_images(const std::string& dataset_spec) noexcept;

}  // namespace shardlens

#include "core/dataset/predictions_file.h"

#include <algorithm>
#include <span>

#include "core/io/csv.h"
#include "core/io/npy.h"
#include "core/vocabulary/huge_pages.h"
#include "core/vocabulary/types.h"

namespace shardlens {

std::vector<int32_t> read_predictions_file(const Spec& spec, const Labels& labels) {
  if (spec.kind != "npy" && spec.kind != "csv")
    throw InputError("--predictor: " + spec.kind + " is not a predictions file (npy, csv)");
  if (spec.path.empty()) throw InputError("--predictor: " + spec.kind + ": needs a file path");
  std::vector<int32_t> out;
  const auto convert = [&](size_t offset, std::span<const int64_t> values) {
    bool in_range = true;  // one vectorized pass; the message names the first bad value
    for (const int64_t v : values) in_range &= v >= 0 && v < labels.num_classes;
    for (size_t k = 0; !in_range && k < values.size(); ++k) {
      const int64_t v = values[k];
      if (v < 0 || v >= labels.num_classes) {
        throw InputError(spec.path + ": prediction " + std::to_string(v) + " at index " +
                         std::to_string(offset + k) + " is not a class in [0, " +
                         std::to_string(labels.num_classes) + ")");
      }
    }
    out.resize(offset + values.size());
    std::copy(values.begin(), values.end(), out.begin() + std::ptrdiff_t(offset));
  };
  if (spec.kind == "npy") {
    read_npy_integer_column(spec.path, [&](size_t total, size_t offset, auto values) {
      if (offset == 0) reserve_huge(out, total);
      convert(offset, values);
    });
  } else {
    const auto values = read_csv_integers(spec.path, {"prediction", "pred", "preds"});
    out.reserve(values.size());
    convert(0, values);
  }
  // Every value was range-checked as it came; what is left to check is the count.
  if (out.size() != labels.targets.size()) validate_predictions(out, labels, spec.path);
  return out;
}

void validate_predictions(const std::vector<int32_t>& predictions, const Labels& labels,
                          const std::string& origin) {
  if (predictions.size() != labels.targets.size()) {
    throw InputError(origin + ": " + std::to_string(predictions.size()) +
                     " predictions for a dataset of " + std::to_string(labels.size()) +
                     " samples (one per dataset index expected)");
  }
  for (size_t i = 0; i < predictions.size(); ++i) {
    if (predictions[i] < 0 || predictions[i] >= labels.num_classes) {
      throw InputError(origin + ": prediction " + std::to_string(predictions[i]) + " at index " +
                       std::to_string(i) + " is not a class in [0, " +
                       std::to_string(labels.num_classes) + ")");
    }
  }
}

}  // namespace shardlens

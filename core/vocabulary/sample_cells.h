#pragma once
// What one sample contributes to a confusion matrix when it is more than one cell of weight
// 1. A sample is what a sampler deals out, pads, limits and duplicates (an image, a sequence,
// a multilabel item); its contribution is a set of (true, predicted, count) cells:
//   classification  one cell of weight 1 (no table: the record's target and prediction);
//   segmentation    the image's (true, predicted) pixel histogram, ignore_index pixels left out;
//   tokens          one count per non-ignored token (labels -100 left out);
//   multilabel      one 2 x 2 cell per label, in a matrix of 2 L classes: class 2l + t is
//                   "label l is t" (t = 0 absent, 1 present), so label l's torchmetrics
//                   MultilabelConfusionMatrix block [l, t, p] is cell (2l + t, 2l + p).
// Every consumer counts a sample through count_sample_cells (records.h), so per-rank, synced
// and expected matrices, the row check and the diagnosis see one model whatever the task.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardlens {

enum class Task : uint8_t { Classification, Segmentation, Tokens, Multilabel };

std::string to_string(Task t);  // "classification", "segmentation", "tokens", "multilabel"
std::optional<Task> task_from_string(std::string_view text);
// What one count of the matrix is: "samples", "pixels", "tokens", "label decisions".
std::string count_unit(Task t);
// Singular: "sample", "pixel", "token", "label decision".
std::string count_unit_one(Task t);
// What a sample is called: "sample", "image", "sequence", "item".
std::string sample_word(Task t);

// The class a multilabel matrix gives "label `label` is `present`".
inline int32_t multilabel_class(int32_t label, bool present) {
  return 2 * label + (present ? 1 : 0);
}
// "cat present" / "cat absent": the names of a multilabel matrix's 2 L classes.
std::vector<std::string> multilabel_class_names(const std::vector<std::string>& label_names);

// Each row's cells: [offsets[row], offsets[row + 1]) of `keys` and `counts`, key = target *
// C + prediction. Rows are dataset indices (a simulation's inputs) or records (a user's run:
// Record::cells names the row). Memory is the non-zero cells, not H x W.
struct CellTable {
  int32_t classes = 0;
  std::vector<uint64_t> offsets{0};
  std::vector<uint32_t> keys;
  std::vector<uint32_t> counts;

  int64_t rows() const { return static_cast<int64_t>(offsets.size()) - 1; }
  size_t begin(int64_t row) const { return static_cast<size_t>(offsets[static_cast<size_t>(row)]); }
  size_t end(int64_t row) const {
    return static_cast<size_t>(offsets[static_cast<size_t>(row) + 1]);
  }
  std::span<const uint32_t> keys_of(int64_t row) const {
    return {keys.data() + begin(row), end(row) - begin(row)};
  }
  std::span<const uint32_t> counts_of(int64_t row) const {
    return {counts.data() + begin(row), end(row) - begin(row)};
  }
  // The row's counts added up: a segmentation image's non-ignored pixels.
  int64_t total(int64_t row) const;
  // Appends a row; returns its number.
  int64_t add_row(std::span<const uint32_t> row_keys, std::span<const uint32_t> row_counts);
  // The row's largest true class and largest predicted class (by count; the lower class on a
  // tie): what a record of the sample shows as its target and prediction. {-1, -1} for an
  // empty row (an image of ignored pixels only).
  std::pair<int32_t, int32_t> dominant(int64_t row) const;
  size_t bytes() const { return offsets.size() * 8 + keys.size() * 4 + counts.size() * 4; }
};

}  // namespace shardlens

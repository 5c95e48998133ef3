#pragma once
// Dataset labels: the true class of every dataset index.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/io/class_hierarchy.h"
#include "core/vocabulary/huge_pages.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

struct Labels {
  std::vector<int32_t> targets;  // true class per dataset index
  int32_t num_classes = 0;
  std::vector<std::string> class_names;  // empty, or one per class
  std::string source;                    // human description, e.g. "fashion-mnist:test"
  // A subset of a dataset (",first=N", ",indices=FILE"): the full dataset's index of each
  // sample, so its image is still found. Empty when the labels are the whole dataset.
  std::vector<int64_t> source_indices;
  // The classes' parents, from the spec's ",hierarchy=FILE"; null without one.
  std::shared_ptr<const ClassHierarchy> hierarchy;

  int64_t size() const { return static_cast<int64_t>(targets.size()); }
  std::vector<int64_t> class_counts() const;
  std::string class_name(int32_t c) const;  // the name, or the number as text
};

// Builds labels from integers read out of a file chunk by chunk, so a file is never held
// as int64 in full: the same checks as labels_from_values, one chunk at a time.
class LabelBuilder {
 public:
  LabelBuilder(int32_t num_classes, std::string origin);
  void reserve(size_t count) { reserve_huge(m_labels.targets, count); }
  void add(std::span<const int64_t> values);  // throws InputError
  Labels finish();                            // throws InputError when no label came
 private:
  Labels m_labels;
  int32_t m_classes;
  std::string m_origin;
  int64_t m_max = -1;
};

// Builds labels from integers read out of a file; rejects negatives and values
// >= num_classes (when num_classes > 0; otherwise num_classes = max + 1). `origin` names the
// file in error messages.
Labels labels_from_values(const std::vector<int64_t>& values, int32_t num_classes,
                          const std::string& origin);

// Synthetic label layouts. Class order over indices is a deterministic shuffle (seed
// `layout_seed`) so it looks like a real dataset; `blocks` keeps classes contiguous.
enum class LabelLayout { Shuffled, Blocks, Interleaved };
Labels synthetic_counts(const std::vector<int64_t>& counts,
                        LabelLayout layout = LabelLayout::Shuffled, uint32_t layout_seed = 0,
                        Progress* progress = nullptr);
// The Shuffled layout's shuffle of `targets` in place: Fisher-Yates from the end with
// std::mt19937(seed) draws, j = gen() % (i + 1) (exposed for tests).
// `progress` moves the "loading labels" stage (10^9 labels take seconds).
void shuffle_layout(std::vector<int32_t>& targets, uint32_t seed, Progress* progress = nullptr);
// Zipf-imbalanced: class k gets a share proportional to 1 / (k + 1)^exponent of n samples.
std::vector<int64_t> zipf_counts(int32_t classes, int64_t n, double exponent);

const std::vector<std::string>& fashion_mnist_class_names();

}  // namespace shardlens

#include "core/dataset/labels.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/vocabulary/block_mt19937.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

std::vector<int64_t> Labels::class_counts() const {
  std::vector<int64_t> counts(static_cast<size_t>(num_classes), 0);
  for (int32_t t : targets) ++counts[static_cast<size_t>(t)];
  return counts;
}

std::string Labels::class_name(int32_t c) const {
  if (c >= 0 && static_cast<size_t>(c) < class_names.size()) return class_names[c];
  return std::to_string(c);
}

LabelBuilder::LabelBuilder(int32_t num_classes, std::string origin)
    : m_classes(num_classes), m_origin(std::move(origin)) {
  if (num_classes > kMaxClasses) {
    throw InputError(m_origin + ": " + std::to_string(num_classes) + " classes, more than the " +
                     std::to_string(kMaxClasses) + " supported");
  }
}

void LabelBuilder::add(std::span<const int64_t> values) {
  const size_t first = m_labels.targets.size();
  const int64_t bound = m_classes > 0 ? m_classes : kMaxClasses;
  // The range check first, as one branch-free pass the compiler vectorizes; the message,
  // when it fails, names the first bad label.
  // One branch-free pass the compiler vectorizes: range, maximum and the narrowing copy;
  // the message, when the range fails, names the first bad label.
  m_labels.targets.resize(first + values.size());
  int32_t* out = m_labels.targets.data() + first;
  bool in_range = true;
  int64_t max = m_max;
  for (size_t k = 0; k < values.size(); ++k) {
    const int64_t v = values[k];
    in_range &= v >= 0 && v < bound;
    max = std::max(max, v);
    out[k] = static_cast<int32_t>(v);
  }
  if (!in_range) [[unlikely]] {
    m_labels.targets.resize(first);
    for (size_t k = 0; k < values.size(); ++k) {
      const int64_t v = values[k];
      if (v >= 0 && v < bound) continue;
      const std::string label = m_origin + ": label " + std::to_string(v);
      const std::string at = " at index " + std::to_string(first + k);
      if (v < 0) throw InputError(label + at + " is negative");
      if (m_classes > 0) {
        throw InputError(label + at + " is >= the number of classes (" + std::to_string(m_classes) +
                         ")");
      }
      throw InputError(label + " implies more than " + std::to_string(kMaxClasses) + " classes");
    }
  }
  m_max = max;
}

Labels LabelBuilder::finish() {
  if (m_labels.targets.empty()) throw InputError(m_origin + ": no labels");
  m_labels.num_classes = m_classes > 0 ? m_classes : static_cast<int32_t>(m_max + 1);
  m_labels.source = m_origin;
  return std::move(m_labels);
}

Labels labels_from_values(const std::vector<int64_t>& values, int32_t num_classes,
                          const std::string& origin) {
  LabelBuilder builder(num_classes, origin);
  builder.reserve(values.size());
  builder.add(values);
  return builder.finish();
}

void shuffle_layout(std::vector<int32_t>& targets, uint32_t seed, Progress* progress) {
  // Fisher-Yates from the end with std::mt19937(seed) draws, gen() % (i + 1): the layout
  // every synthetic dataset has had. The draws do not depend on the array, so a block of
  // swap targets is drawn first and prefetched ahead of the swaps (at 10^9 samples the
  // random accesses, not the draws, set the pace); i + 1 < 2^32, so the 32-bit remainder is
  // the 64-bit one.
  BlockMt19937 gen(seed);
  int32_t* t = targets.data();
  constexpr int64_t kBlock = 256, kAhead = 32;
  uint32_t to[kBlock];
  const auto n = static_cast<int64_t>(targets.size());
  for (int64_t top = n - 1; top > 0; top -= kBlock) {
    if ((n - 1 - top) % (kBlock << 12) == 0)
      step(progress, "loading labels", double(n - 1 - top) / double(n));
    const int64_t len = std::min(kBlock, top);  // positions top, top - 1, ..., top - len + 1
    for (int64_t k = 0; k < len; ++k) to[k] = gen() % static_cast<uint32_t>(top - k + 1);
    for (int64_t k = 0; k < std::min(kAhead, len); ++k) __builtin_prefetch(t + to[k], 1);
    for (int64_t k = 0; k < len; ++k) {
      if (k + kAhead < len) __builtin_prefetch(t + to[k + kAhead], 1);
      std::swap(t[top - k], t[to[k]]);
    }
  }
}

Labels synthetic_counts(const std::vector<int64_t>& counts, LabelLayout layout,
                        uint32_t layout_seed, Progress* progress) {
  Labels labels;
  labels.num_classes = static_cast<int32_t>(counts.size());
  const int64_t n = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  reserve_huge(labels.targets, static_cast<size_t>(n));
  if (layout == LabelLayout::Interleaved) {
    // Round-robin over the classes that still have samples left.
    std::vector<int64_t> left = counts;
    while (static_cast<int64_t>(labels.targets.size()) < n) {
      for (size_t c = 0; c < left.size(); ++c) {
        if (left[c] > 0) {
          labels.targets.push_back(static_cast<int32_t>(c));
          --left[c];
        }
      }
    }
  } else {
    for (size_t c = 0; c < counts.size(); ++c) {
      labels.targets.insert(labels.targets.end(), static_cast<size_t>(counts[c]),
                            static_cast<int32_t>(c));
    }
    if (layout == LabelLayout::Shuffled) shuffle_layout(labels.targets, layout_seed, progress);
  }
  return labels;
}

std::vector<int64_t> zipf_counts(int32_t classes, int64_t n, double exponent) {
  // Largest-remainder rounding so the counts add up to exactly n.
  std::vector<double> share(static_cast<size_t>(classes));
  double sum = 0;
  for (int32_t k = 0; k < classes; ++k) sum += share[k] = 1.0 / std::pow(k + 1.0, exponent);
  std::vector<int64_t> counts(static_cast<size_t>(classes));
  std::vector<std::pair<double, int32_t>> remainders;
  int64_t assigned = 0;
  for (int32_t k = 0; k < classes; ++k) {
    const double exact = static_cast<double>(n) * share[k] / sum;
    counts[k] = static_cast<int64_t>(std::floor(exact));
    assigned += counts[k];
    remainders.emplace_back(exact - static_cast<double>(counts[k]), k);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](auto& a, auto& b) { return a.first > b.first; });
  for (int64_t i = 0; assigned < n; ++i, ++assigned) ++counts[remainders[i % classes].second];
  return counts;
}

const std::vector<std::string>& fashion_mnist_class_names() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                 "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                 "Bag",         "Ankle boot"};
  return names;
}

}  // namespace shardlens

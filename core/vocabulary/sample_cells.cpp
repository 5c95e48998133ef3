#include "core/vocabulary/sample_cells.h"

#include <algorithm>
#include <array>
#include <map>

namespace shardlens {

namespace {
constexpr std::array<const char*, 4> kTaskNames = {"classification", "segmentation", "tokens",
                                                   "multilabel"};
}  // namespace

std::string to_string(Task t) {
  return kTaskNames[static_cast<size_t>(t)];
}

std::optional<Task> task_from_string(std::string_view text) {
  for (size_t i = 0; i < kTaskNames.size(); ++i)
    if (text == kTaskNames[i]) return static_cast<Task>(i);
  return std::nullopt;
}

std::string count_unit(Task t) {
  switch (t) {
    case Task::Classification:
      return "samples";
    case Task::Segmentation:
      return "pixels";
    case Task::Tokens:
      return "tokens";
    case Task::Multilabel:
      return "label decisions";
  }
  return "samples";
}

std::string count_unit_one(Task t) {
  std::string plural = count_unit(t);
  plural.pop_back();
  return plural;
}

std::string sample_word(Task t) {
  switch (t) {
    case Task::Classification:
      return "sample";
    case Task::Segmentation:
      return "image";
    case Task::Tokens:
      return "sequence";
    case Task::Multilabel:
      return "item";
  }
  return "sample";
}

std::vector<std::string> multilabel_class_names(const std::vector<std::string>& label_names) {
  std::vector<std::string> out;
  out.reserve(label_names.size() * 2);
  for (const std::string& name : label_names) {
    out.push_back(name + " absent");
    out.push_back(name + " present");
  }
  return out;
}

int64_t CellTable::total(int64_t row) const {
  int64_t sum = 0;
  for (uint32_t c : counts_of(row)) sum += c;
  return sum;
}

int64_t CellTable::add_row(std::span<const uint32_t> row_keys,
                           std::span<const uint32_t> row_counts) {
  keys.insert(keys.end(), row_keys.begin(), row_keys.end());
  counts.insert(counts.end(), row_counts.begin(), row_counts.end());
  offsets.push_back(keys.size());
  return rows() - 1;
}

std::pair<int32_t, int32_t> CellTable::dominant(int64_t row) const {
  const auto k = keys_of(row);
  const auto n = counts_of(row);
  if (k.empty() || classes <= 0) return {-1, -1};
  // Rows are short (the classes an image shows): a sorted map per side is enough.
  std::map<int32_t, int64_t> truth, predicted;
  for (size_t i = 0; i < k.size(); ++i) {
    truth[int32_t(k[i] / uint32_t(classes))] += n[i];
    predicted[int32_t(k[i] % uint32_t(classes))] += n[i];
  }
  auto largest = [](const std::map<int32_t, int64_t>& m) {
    return std::max_element(m.begin(), m.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  };
  return {largest(truth), largest(predicted)};
}

}  // namespace shardlens

#pragma once
// Datasets of samples that count many cells (core/vocabulary/sample_cells.h), written out in
// a test: each sample's (true, predicted, count) cells, and the class counts the test sums by
// hand, which are checked against what make_cell_inputs sums so a fixture cannot drift from
// its comment. Used by the gtest and the Qt Test suites alike, so it throws, not EXPECTs.
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/sim/engine.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens::fixtures {

// One sample's cells: (true class, predicted class, count).
using SampleCellList = std::vector<std::tuple<int32_t, int32_t, uint32_t>>;

inline std::shared_ptr<const DatasetInputs> cell_dataset(
    int32_t classes, const std::vector<SampleCellList>& samples,
    const std::vector<int64_t>& class_counts_by_hand, Task task = Task::Segmentation,
    std::vector<std::string> class_names = {}) {
  auto cells = std::make_shared<CellTable>();
  cells->classes = classes;
  for (const SampleCellList& sample : samples) {
    std::vector<uint32_t> keys, counts;
    for (const auto& [t, p, n] : sample) {
      keys.push_back(uint32_t(t * classes + p));
      counts.push_back(n);
    }
    cells->add_row(keys, counts);
  }
  Labels labels;
  labels.class_names = std::move(class_names);
  auto inputs = make_cell_inputs(std::move(cells), task, std::move(labels));
  if (inputs->class_counts != class_counts_by_hand)
    throw std::logic_error("cell_dataset: the class counts summed by hand are not the cells'");
  return inputs;
}

}  // namespace shardlens::fixtures

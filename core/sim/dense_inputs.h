#pragma once
// The inputs of a dense dataset (core/dataset/dense_synthetic.h) under a perfect or noisy
// predictor: each sample's true cells become its predicted cells (predict_cells), one
// CellTable row per dataset index, so the engine samples, pads, limits and syncs images,
// sequences and items as it does classification samples.
#include <memory>

#include "core/dataset/dataset_inputs.h"
#include "core/dataset/dense_synthetic.h"
#include "core/evaluation/scenario.h"
#include "core/sim/specs.h"
#include "core/vocabulary/progress.h"

namespace shardlens {

// The cells `predictor` gives `truth`, row i for sample i.
std::shared_ptr<const CellTable> predicted_cells(const DenseTruth& truth,
                                                 const LabelPredictor& predictor);

// The dataset and predictor of `s` (is_dense_dataset(s.dataset)). A predictor read from a
// file or run as a model is refused: a dense sample's prediction is drawn from its truth.
std::shared_ptr<const DatasetInputs> load_dense_inputs(const Scenario& s,
                                                       Progress* progress = nullptr);

// The ignore index a run of `s` reports: the scenario's, else the dense dataset's own (255 of
// a segmentation set, -100 of a token set), whose pixels / tokens are not cells.
int reported_ignore_index(const Scenario& s);

}  // namespace shardlens

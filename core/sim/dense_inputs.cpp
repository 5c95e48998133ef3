#include "core/sim/dense_inputs.h"

#include "core/dataset/dataset_spec.h"
#include "core/sim/engine.h"
#include "core/vocabulary/types.h"

namespace shardlens {

std::shared_ptr<const CellTable> predicted_cells(const DenseTruth& truth,
                                                 const LabelPredictor& predictor) {
  auto cells = std::make_shared<CellTable>();
  cells->classes = truth.classes();
  cells->offsets.reserve(truth.truth.offsets.size());
  // Noise splits a true class's count over at most three predictions.
  const size_t most = truth.truth.keys.size() * (predictor.noisy ? 3 : 1);
  cells->keys.reserve(most);
  cells->counts.reserve(most);
  const NoisyParams* noisy = predictor.noisy ? &*predictor.noisy : nullptr;
  for (int64_t i = 0; i < truth.size(); ++i) {
    predict_cells(noisy, truth.task, i, truth.classes(), truth.truth.keys_of(i),
                  truth.truth.counts_of(i), cells->keys, cells->counts);
    cells->offsets.push_back(cells->keys.size());
  }
  return cells;
}

std::shared_ptr<const DatasetInputs> load_dense_inputs(const Scenario& s, Progress* progress) {
  step(progress, "loading labels", 0.0);
  const DenseTruth truth = load_dense_truth(s.dataset);
  const std::optional<LabelPredictor> predictor = label_predictor(s.predictor);
  if (!predictor)
    throw InputError("--predictor: " + s.predictor + " does not predict a " +
                     to_string(truth.task) + " dataset (" + s.dataset +
                     "): use perfect or noisy:accuracy=P,seed=S, drawn per " +
                     sample_word(truth.task));
  step(progress, "predicting", 0.0);
  Labels labels;
  labels.class_names = truth.class_names;
  labels.source = truth.source;
  return make_cell_inputs(predicted_cells(truth, *predictor), truth.task, std::move(labels));
}

int reported_ignore_index(const Scenario& s) {
  if (s.ignore_index >= 0 || !is_dense_dataset(s.dataset)) return s.ignore_index;
  return declared_dataset(s.dataset)->ignore_index;
}

}  // namespace shardlens

#include "core/sim/validations.h"

#include <algorithm>

#include "core/evaluation/framework_hazards.h"
#include "core/sim/engine.h"

namespace shardlens {

std::vector<Evaluation> simulate_validations(const Scenario& s, Progress* progress) {
  std::vector<Evaluation> out;
  const int k = s.validations_per_epoch;
  if (k <= 1) {
    out.push_back(simulate(s, progress));
    return out;
  }
  return simulate_validations(s, load_inputs(s, progress), progress);
}

std::vector<Evaluation> simulate_validations(const Scenario& s,
                                             std::shared_ptr<const DatasetInputs> inputs,
                                             Progress* progress, const Evaluation* earlier) {
  std::vector<Evaluation> out;
  const int k = std::max(1, s.validations_per_epoch);
  if (k == 1) {
    out.push_back(evaluate(s, std::move(inputs), progress, earlier));
    return out;
  }
  for (int v = 0; v < k; ++v) {
    Scenario one = s;
    one.sampler.inner_iteration = s.sampler.epoch * k + v;
    Evaluation e = evaluate(one, inputs, progress, earlier);
    e.meta.validation_in_epoch = v;
    out.push_back(std::move(e));
  }
  mark_repeated_validations(out);
  return out;
}

}  // namespace shardlens

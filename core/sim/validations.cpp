#include "core/sim/validations.h"

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
  const auto inputs = load_inputs(s, progress);
  for (int v = 0; v < k; ++v) {
    Scenario one = s;
    one.sampler.inner_iteration = s.sampler.epoch * k + v;
    Evaluation e = evaluate(one, inputs, progress);
    e.validation = v;
    out.push_back(std::move(e));
  }
  mark_repeated_validations(out);
  return out;
}

}  // namespace shardlens

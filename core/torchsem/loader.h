#pragma once
// DataLoader batching and Lightning's batch limit and sanity check.
#include <cstdint>
#include <string>
#include <vector>

#include "core/torchsem/sampler.h"

namespace shardlens {

// Lightning's limit_val_batches: an int k (min(k, batches)) or a float f
// (int(batches * f); 1.0 means all). "1" and "1.0" differ, as in Lightning.
struct BatchLimit {
  enum class Kind { All, Count, Fraction } kind = Kind::All;
  int64_t count = 0;
  double fraction = 1.0;

  static BatchLimit parse(const std::string& text);  // throws InputError
  std::string to_string() const;
  // Batches evaluated out of `batches`; throws InputError when a fraction > 0 gives 0.
  int64_t apply(int64_t batches) const;
  bool operator==(const BatchLimit&) const = default;
};

struct LoaderConfig {
  int64_t batch_size = 1;
  bool drop_last = false;  // the DataLoader's drop_last
  BatchLimit limit;
  bool sanity_leak = false;  // sanity-check batches counted into the metric (not reset)
  int sanity_steps = 2;      // num_sanity_val_steps
  bool operator==(const LoaderConfig&) const = default;
};

int64_t batches_per_rank(int64_t rank_samples, const LoaderConfig& loader);

// What one rank actually evaluates: sanity batches (when leaked, from the epoch-0 sampler
// output) followed by the epoch's limited batches.
struct EvaluatedRank {
  RankSequence sequence;
  int64_t sampler_size = 0;  // samples the sampler gave this rank
  int64_t batches = 0;       // batches evaluated in the epoch (after limit)
  int64_t sanity_batches = 0;
};

struct ShardPlan {
  int64_t n = 0;
  int world_size = 0;
  int64_t batch_size = 1;  // each rank's batch size (B / W for Accelerate's split_batches)
  std::vector<RankSequence> sampler;     // sampler output, padding included
  std::vector<EvaluatedRank> evaluated;  // after batching, limit and sanity
};

ShardPlan plan_shards(int64_t n, const SamplerConfig& sampler, const LoaderConfig& loader);

// Whether every rank's last evaluated batch was its loader's last one (no limit cut it, no
// drop_last): gather_for_metrics trims only then.
bool plan_exhausted(const ShardPlan& plan, const LoaderConfig& loader);

// The steps each rank runs in the epoch and the length of its last batch (sanity batches
// aside). Only Accelerate's even_batches=False makes them differ: the batches are dealt
// round-robin without completing the last round, so a rank may run one step fewer, or all
// run the same steps and one ends on a short batch.
struct StepLayout {
  std::vector<int64_t> steps;       // per rank
  std::vector<int64_t> last_batch;  // per rank: the samples of its last step (0: no step)

  // A per-step collective (gather, gather_for_metrics) then waits for a rank that has
  // finished: it hangs.
  bool different_steps() const;
  // The same steps, but last batches of different sizes: an all_gather of unequal tensors
  // fails (gloo: "op.preamble.length <= op.nbytes") unless each rank's tensor is padded to
  // the longest first (pad_across_processes).
  bool unequal_last_batches() const;
  bool even() const { return !different_steps() && !unequal_last_batches(); }
};

StepLayout step_layout(const ShardPlan& plan);

}  // namespace shardlens

#pragma once
// Hugging Face Accelerate's BatchSamplerShard (what accelerator.prepare(loader) and so the
// HF Trainer put in every evaluation loader), reproduced over the loader's sampler order:
// the identity; SeedableRandomSampler's torch.randperm(n) seeded seed + epoch; or, by
// default, the RandomSampler's generator that prepare() seeded from the global RNG (exact
// when the global seed was set and nothing drew from the RNG before prepare()). A loader that
// already had a DistributedSampler is sharded twice: each rank keeps 1/W of its own shard.
//
// The loader's batches of B are dealt round-robin (batch k to rank k % W). With even_batches
// the last round is completed by cycling samples from the start of the order, so every rank
// runs the same number of steps; without it, ranks past the last batch get none and the last
// batch may be short. split_batches slices every batch of B into W slices of B / W instead.
// The loader's drop_last stops at the last full round (full batch, when splitting).
#include <cstdint>
#include <string>
#include <vector>

#include "core/torchsem/loader.h"
#include "core/torchsem/sampler.h"
#include "core/torchsem/sync.h"

namespace shardlens {

struct AccelerateShards {
  std::vector<RankSequence> ranks;  // each rank's batches, concatenated (cycled padding flagged)
  int64_t rank_batch_size = 1;      // B, or B / W with split_batches
  int64_t total_batch_size = 1;     // B x W, or B with split_batches (gather_for_metrics)
};

// Throws InputError for what Accelerate rejects (split_batches with B not a multiple of W).
AccelerateShards accelerate_shards(int64_t n, const SamplerConfig& config, int64_t batch_size,
                                   bool loader_drop_last);

// Why a simulated order is only representative of the user's run, or empty when it is exact:
// Accelerate's default shuffle follows the global RNG, which anything may draw from between
// torch.manual_seed(seed) and prepare() (a model's initialisation does).
std::string accelerate_order_note(const SamplerConfig& config);

// Sets a sync's gather step and trim condition from the plan: each rank's own batch size
// (B / W with split_batches) and whether every loader ran to its end without drop_last.
void use_plan_batches(SyncInputs& sync, const ShardPlan& plan, const LoaderConfig& loader);

}  // namespace shardlens

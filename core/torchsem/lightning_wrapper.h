#pragma once
// Lightning's DistributedSamplerWrapper (2.x, and every sampler from 1.7.0 to 2.0.2): each
// rank materialises list(inner_sampler) itself, then takes positions r, r + W, ... of that
// list exactly as a DistributedSampler over len(inner_sampler) positions (padding, drop_last,
// the wrapper's own shuffle seeded seed + epoch). A random inner sampler whose generator is
// not seeded alike on every rank gives each rank a different list: shards overlap.
#include <cstdint>
#include <vector>

#include "core/torchsem/sampler.h"

namespace shardlens {

// torch.multinomial(weights, num_samples, replacement=True, generator=g) on CPU after
// g.manual_seed(seed), skipping `skip_draws` earlier draws of the same generator (each earlier
// iteration of the sampler drew num_samples). Bit-exact with torch 1.13: double cumulative
// weights normalised by their sum, one 53-bit uniform double from two mt19937 words per
// draw, a binary search for the first bucket >= the draw. Weights empty: uniform over
// `categories`. Throws InputError for what torch rejects (negative or all-zero weights).
std::vector<uint32_t> weighted_random_draws(const std::vector<double>& weights, int64_t categories,
                                            int64_t num_samples, int64_t seed,
                                            uint64_t skip_draws = 0);

// The list a rank's inner sampler yields on its `iteration`-th pass (0 for the first).
std::vector<uint32_t> inner_sampler_list(const InnerSampler& inner, int64_t n, int64_t seed,
                                         int64_t iteration);

// Every rank's share under DistributedSamplerWrapper. The inner generator of rank r is seeded
// with rank_seeds[r] (or seed for all ranks) and the epoch counts its earlier iterations.
std::vector<RankSequence> sample_lightning_wrapper(int64_t n, const SamplerConfig& config);

}  // namespace shardlens

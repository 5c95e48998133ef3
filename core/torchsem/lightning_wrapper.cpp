#include "core/torchsem/lightning_wrapper.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

constexpr int64_t kMaxCategories = int64_t(1) << 24;  // torch.multinomial's limit

double uniform53(std::mt19937& gen) {
  const uint64_t hi = gen();
  const uint64_t lo = gen();
  const uint64_t bits = ((hi << 32) | lo) & ((uint64_t(1) << 53) - 1);
  return static_cast<double>(bits) * (1.0 / static_cast<double>(uint64_t(1) << 53));
}

int64_t list_length(const InnerSampler& inner, int64_t n) {
  switch (inner.kind) {
    case InnerSampler::Kind::Sequential:
      return n;
    case InnerSampler::Kind::WeightedRandom:
      return inner.num_samples > 0 ? inner.num_samples
                                   : (inner.weights.empty() ? n : int64_t(inner.weights.size()));
    case InnerSampler::Kind::Recorded:
      return int64_t(inner.indices.size());
  }
  return n;
}

}  // namespace

std::vector<uint32_t> weighted_random_draws(const std::vector<double>& weights, int64_t categories,
                                            int64_t num_samples, int64_t seed,
                                            uint64_t skip_draws) {
  const int64_t k = weights.empty() ? categories : int64_t(weights.size());
  if (k < 1 || k > kMaxCategories) {
    throw InputError("--inner-sampler weighted-random: " + std::to_string(k) +
                     " weights (torch.multinomial takes 1 to 2^24 categories)");
  }
  if (num_samples < 2) {
    // torch draws a single sample by another algorithm (exponential race), not modelled.
    throw InputError(
        "--inner-num-samples: must be at least 2 (torch draws one sample differently)");
  }
  std::vector<double> cum(static_cast<size_t>(k));
  double sum = 0;
  for (int64_t j = 0; j < k; ++j) {
    const double v = weights.empty() ? 1.0 : weights[size_t(j)];
    if (!(v >= 0) || !std::isfinite(v)) {
      throw InputError("--inner-weights: weight " + std::to_string(j) +
                       " is negative or not finite (torch.multinomial rejects it)");
    }
    sum += v;
    cum[size_t(j)] = sum;
  }
  if (!(sum > 0)) throw InputError("--inner-weights: the weights sum to 0 (torch rejects it)");
  for (double& c : cum) c /= sum;
  cum.back() = 1;
  std::mt19937 gen(static_cast<uint32_t>(static_cast<uint64_t>(seed)));
  gen.discard(2 * skip_draws);
  std::vector<uint32_t> out(static_cast<size_t>(num_samples));
  for (auto& o : out) {
    const double u = uniform53(gen);
    o = static_cast<uint32_t>(std::lower_bound(cum.begin(), cum.end(), u) - cum.begin());
  }
  return out;
}

std::vector<uint32_t> inner_sampler_list(const InnerSampler& inner, int64_t n, int64_t seed,
                                         int64_t iteration) {
  const int64_t m = list_length(inner, n);
  if (m > kMaxSamples) {
    throw InputError("--inner-num-samples: " + std::to_string(m) + " is above the limit of " +
                     std::to_string(kMaxSamples));
  }
  std::vector<uint32_t> list;
  switch (inner.kind) {
    case InnerSampler::Kind::Sequential:
      list.resize(size_t(m));
      for (int64_t i = 0; i < m; ++i) list[size_t(i)] = uint32_t(i);
      break;
    case InnerSampler::Kind::WeightedRandom:
      if (int64_t(inner.weights.size()) > n) {
        throw InputError("--inner-weights: " + std::to_string(inner.weights.size()) +
                         " weights for a dataset of " + std::to_string(n));
      }
      list = weighted_random_draws(inner.weights, n, m, seed, uint64_t(iteration) * uint64_t(m));
      break;
    case InnerSampler::Kind::Recorded:
      for (int64_t i : inner.indices) {
        if (i < 0 || i >= n) {
          throw InputError("--inner-indices: index " + std::to_string(i) +
                           " is outside the dataset (0 to " + std::to_string(n - 1) + ")");
        }
        list.push_back(uint32_t(i));
      }
      break;
  }
  if (list.empty()) throw InputError("--inner-sampler: the wrapped sampler yields no index");
  return list;
}

std::vector<RankSequence> sample_lightning_wrapper(int64_t n, const SamplerConfig& c) {
  const int w = c.world_size;
  const bool random_inner = c.inner.kind == InnerSampler::Kind::WeightedRandom;
  // One order per distinct (inner seed, wrapper seed): ranks seeded alike share it.
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<const Order>> orders;
  std::vector<RankSequence> ranks(static_cast<size_t>(w));
  for (int r = 0; r < w; ++r) {
    const int64_t seed = c.rank_seeds.empty() ? c.seed : c.rank_seeds[size_t(r)];
    const std::pair<int64_t, int64_t> key{random_inner ? seed : 0, c.shuffle ? seed : 0};
    auto& order = orders[key];
    if (!order) {
      const int64_t iteration = c.inner_iteration >= 0 ? c.inner_iteration : c.epoch;
      std::vector<uint32_t> list = inner_sampler_list(c.inner, n, seed, iteration);
      const int64_t m = int64_t(list.size());
      auto o = std::make_shared<Order>();
      o->n = m;
      o->permutation = c.inner.kind == InnerSampler::Kind::Sequential;
      if (c.shuffle) {
        const std::vector<uint32_t> positions = randperm(m, seed + c.epoch, c.torch);
        o->perm.resize(size_t(m));
        for (int64_t p = 0; p < m; ++p) o->perm[size_t(p)] = list[positions[size_t(p)]];
      } else {
        o->perm = std::move(list);
      }
      order = std::move(o);
    }
    Segment s;
    s.order = order;
    s.start = r;
    s.stride = w;
    s.count = distributed_num_samples(order->n, w, c.drop_last);
    ranks[size_t(r)].segments.push_back(s);
  }
  return ranks;
}

}  // namespace shardlens

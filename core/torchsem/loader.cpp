#include "core/torchsem/loader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "core/torchsem/accelerate_sampler.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

BatchLimit BatchLimit::parse(const std::string& text) {
  BatchLimit limit;
  if (text.empty() || text == "all") return limit;
  const bool is_float = text.find_first_of(".eE") != std::string::npos;
  char* end = nullptr;
  const std::string where = "--limit-batches: '" + text + "' ";
  if (is_float) {
    const double f = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !(f >= 0.0 && f <= 1.0)) {
      throw InputError(where + "must be an integer >= 0 or a fraction in [0.0, 1.0]");
    }
    limit.kind = Kind::Fraction;
    limit.fraction = f;
  } else {
    const long long k = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || k < 0) {
      throw InputError(where + "must be an integer >= 0 or a fraction in [0.0, 1.0]");
    }
    limit.kind = Kind::Count;
    limit.count = k;
  }
  return limit;
}

std::string BatchLimit::to_string() const {
  switch (kind) {
    case Kind::All:
      return "all";
    case Kind::Count:
      return std::to_string(count);
    case Kind::Fraction: {
      std::string s = std::to_string(fraction);
      while (s.size() > 3 && s.back() == '0') s.pop_back();  // "0.250000" -> "0.25"
      return s;
    }
  }
  return "all";
}

int64_t BatchLimit::apply(int64_t batches) const {
  switch (kind) {
    case Kind::All:
      return batches;
    case Kind::Count:
      return std::min(count, batches);
    case Kind::Fraction: {
      if (fraction == 1.0) return batches;
      // Lightning: int(batches * f) in double arithmetic (int(100 * 0.29) == 28).
      const auto limited = static_cast<int64_t>(static_cast<double>(batches) * fraction);
      if (limited == 0 && fraction > 0.0 && batches > 0) {
        throw InputError("--limit-batches: " + to_string() + " of " + std::to_string(batches) +
                         " batches is 0 batches; Lightning raises here (use at least " +
                         std::to_string(1.0 / static_cast<double>(batches)) + ")");
      }
      return limited;
    }
  }
  return batches;
}

int64_t batches_per_rank(int64_t rank_samples, const LoaderConfig& loader) {
  const int64_t b = loader.batch_size;
  return loader.drop_last ? rank_samples / b : (rank_samples + b - 1) / b;
}

namespace {

// The sampler's output per rank, and the batch size each rank's loader yields: Accelerate's
// shards are already batched (its loader drop_last applied), the other samplers' are not.
std::vector<RankSequence> sampler_output(int64_t n, const SamplerConfig& sampler,
                                         const LoaderConfig& loader, LoaderConfig& rank_loader) {
  rank_loader = loader;
  if (sampler.kind != SamplerKind::Accelerate) return sample(n, sampler);
  if (n <= 0) throw InputError("dataset: it has no samples");
  AccelerateShards shards = accelerate_shards(n, sampler, loader.batch_size, loader.drop_last);
  rank_loader.batch_size = shards.rank_batch_size;
  rank_loader.drop_last = false;  // every batch it dealt is evaluated (only the last is short)
  return std::move(shards.ranks);
}

}  // namespace

ShardPlan plan_shards(int64_t n, const SamplerConfig& sampler, const LoaderConfig& user_loader) {
  if (user_loader.batch_size < 1) throw InputError("--batch-size: must be at least 1");
  if (user_loader.sanity_steps < 0) throw InputError("--sanity-steps: must not be negative");
  check_world_size(sampler.world_size);
  ShardPlan plan;
  LoaderConfig loader;
  plan.n = n;
  plan.world_size = sampler.world_size;
  plan.sampler = sampler_output(n, sampler, user_loader, loader);
  plan.batch_size = loader.batch_size;
  // The sanity check runs before epoch 0, so it sees the epoch-0 sampler order.
  std::vector<RankSequence> sanity_source;
  if (loader.sanity_leak) {
    SamplerConfig epoch0 = sampler;
    epoch0.epoch = 0;
    LoaderConfig unused;
    sanity_source =
        sampler.epoch == 0 ? plan.sampler : sampler_output(n, epoch0, user_loader, unused);
  }
  for (int r = 0; r < plan.world_size; ++r) {
    const RankSequence& seq = plan.sampler[static_cast<size_t>(r)];
    EvaluatedRank rank;
    rank.sampler_size = seq.size();
    rank.batches = loader.limit.apply(batches_per_rank(rank.sampler_size, loader));
    const int64_t evaluated = std::min(rank.sampler_size, rank.batches * loader.batch_size);
    if (loader.sanity_leak) {
      rank.sanity_batches = std::min<int64_t>(loader.sanity_steps, rank.batches);
      RankSequence sanity = sanity_source[static_cast<size_t>(r)].prefix(
          std::min(rank.sampler_size, rank.sanity_batches * loader.batch_size));
      for (Segment& s : sanity.segments) {
        s.flags |= kSanity;
        rank.sequence.segments.push_back(s);
      }
    }
    for (const Segment& s : seq.prefix(evaluated).segments) rank.sequence.segments.push_back(s);
    plan.evaluated.push_back(std::move(rank));
  }
  return plan;
}

bool plan_exhausted(const ShardPlan& plan, const LoaderConfig& loader) {
  if (loader.drop_last) return false;
  LoaderConfig rank_loader = loader;
  rank_loader.batch_size = plan.batch_size;
  rank_loader.drop_last = false;
  for (const EvaluatedRank& r : plan.evaluated) {
    if (r.batches < batches_per_rank(r.sampler_size, rank_loader)) return false;
  }
  return true;
}

namespace {

bool all_equal(const std::vector<int64_t>& values) {
  return std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) == values.end();
}

}  // namespace

bool StepLayout::different_steps() const {
  return !all_equal(steps);
}

bool StepLayout::unequal_last_batches() const {
  return !different_steps() && !all_equal(last_batch);
}

StepLayout step_layout(const ShardPlan& plan) {
  StepLayout out;
  for (const EvaluatedRank& r : plan.evaluated) {
    const int64_t evaluated = std::min(r.sampler_size, r.batches * plan.batch_size);
    out.steps.push_back(r.batches);
    out.last_batch.push_back(r.batches > 0 ? evaluated - (r.batches - 1) * plan.batch_size : 0);
  }
  return out;
}

}  // namespace shardlens

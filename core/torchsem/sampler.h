#pragma once
// Samplers with exact PyTorch / Lightning semantics. A sampler's output for one rank is a
// list of segments; each segment walks one shared order (a permutation, or the identity) by
// a stride, so the O(n) order is computed once and serves every rank.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/torchsem/randperm.h"
#include "core/vocabulary/records.h"

namespace shardlens {

enum class SamplerKind {
  Distributed,       // torch DistributedSampler (what Lightning injects for val/test)
  Unrepeated,        // Lightning UnrepeatedDistributedSampler (predict): no padding
  Sequential,        // hand-made contiguous split: rank r gets one contiguous block, no padding
  None,              // no distributed sampler: every rank iterates the whole dataset
  Accelerate,        // Hugging Face Accelerate's BatchSamplerShard (whole batches round-robin)
  LightningWrapper,  // Lightning's DistributedSamplerWrapper over a user sampler (`inner`)
  // mmengine's DefaultSampler: with round_up, DistributedSampler's padded rank::W shards;
  // without, unpadded rank::W shards (ceil((n - r) / W) each). Shuffled by randperm(seed +
  // epoch) in both; mmengine's default seed (None) is a random draw rank 0 broadcasts.
  MmengineDefault,
  // detectron2's InferenceSampler: contiguous, unpadded shards of n / W samples, the first
  // n % W ranks one more (detectron2/data/samplers/distributed_sampler.py, since 2021-09).
  Detectron2Inference,
};

// The user's own sampler that Lightning wraps in DistributedSamplerWrapper: every rank
// materialises list(sampler) itself and takes positions r::W of that list.
struct InnerSampler {
  enum class Kind {
    Sequential,      // SequentialSampler-like: 0, 1, ..., n-1
    WeightedRandom,  // WeightedRandomSampler(weights, num_samples, replacement=True, generator)
    Recorded,        // a fixed list of dataset indices (what a custom sampler yielded)
  } kind = Kind::Sequential;
  std::vector<double> weights;   // WeightedRandom: empty = uniform over the dataset
  int64_t num_samples = 0;       // WeightedRandom: 0 = len(weights) (the dataset size)
  std::vector<int64_t> indices;  // Recorded
  bool operator==(const InnerSampler&) const = default;
};

// What the loader handed to accelerator.prepare() already samples with.
enum class AccelerateInput {
  Loader,              // its own Sequential/RandomSampler: one shared order, sharded once
  DistributedSampler,  // a DistributedSampler: BatchSamplerShard shards each rank's shard again
  // An IterableDataset: DataLoaderDispatcher (dispatch_batches, its default). Not reproduced:
  // planning it is refused with what to record instead.
  IterableDispatch,
};

// How a shuffled loader prepared by Accelerate draws its order (DataLoaderConfiguration).
enum class AccelerateShuffle {
  // use_seedable_sampler=False, Accelerate's default: prepare() seeds the RandomSampler's own
  // generator with a draw from the global RNG (torch.manual_seed(seed)), and every iteration
  // continues that generator (synchronised from rank 0).
  GlobalRng,
  // use_seedable_sampler=True (the HF Trainer's default): randperm seeded seed + epoch.
  Seedable,
};

std::string to_string(AccelerateInput v);
AccelerateInput parse_accelerate_input(const std::string& text);  // throws InputError
std::string to_string(AccelerateShuffle v);
AccelerateShuffle parse_accelerate_shuffle(const std::string& text);  // throws InputError

std::string to_string(InnerSampler::Kind kind);
InnerSampler::Kind parse_inner_sampler_kind(const std::string& text);  // throws InputError

struct SamplerConfig {
  SamplerKind kind = SamplerKind::Distributed;
  int world_size = 4;
  bool shuffle = false;
  int64_t seed = 0;
  int64_t epoch = 0;
  bool drop_last = false;           // the sampler's drop_last
  bool round_up = true;             // MmengineDefault: pad to a multiple of W (its default)
  std::vector<int64_t> rank_seeds;  // empty, or one seed per rank (models divergence)
  TorchVersion torch;
  // Accelerate (BatchSamplerShard): split each batch into W slices instead of dealing whole
  // batches; even_batches completes the last round by cycling samples from the start.
  bool split_batches = false;
  bool even_batches = true;
  AccelerateInput accelerate_input = AccelerateInput::Loader;
  // shuffle with Accelerate's own samplers; `seed` is the user's global seed (GlobalRng) or
  // the seedable sampler's, `epoch` the loader's iteration. A DistributedSampler inside
  // (AccelerateInput::DistributedSampler) shuffles with its own seed + epoch instead.
  AccelerateShuffle accelerate_shuffle = AccelerateShuffle::GlobalRng;
  InnerSampler inner;            // LightningWrapper: the sampler that is wrapped
  int64_t inner_iteration = -1;  // the wrapped sampler's pass (earlier iterations); -1: epoch
  bool operator==(const SamplerConfig&) const = default;
};

// An order of dataset indices: a permutation, or the identity when `perm` is empty.
struct Order {
  int64_t n = 0;
  std::vector<uint32_t> perm;
  // Every index at most once (a permutation or the identity); false for a wrapped inner
  // sampler's list, which may repeat indices (drawn with replacement, or recorded).
  bool permutation = true;
  int64_t at(int64_t position) const {
    return perm.empty() ? position : static_cast<int64_t>(perm[static_cast<size_t>(position)]);
  }
};

// Positions start, start + stride, ... (count of them) of an order, taken modulo n;
// positions >= n are padding. `flags` are added to every record of the segment.
struct Segment {
  std::shared_ptr<const Order> order;
  int64_t start = 0;
  int64_t stride = 1;
  int64_t count = 0;
  uint8_t flags = 0;
};

struct RankSequence {
  std::vector<Segment> segments;
  int64_t size() const;
  // First `count` elements (keeps whole segments, cuts the last one).
  RankSequence prefix(int64_t count) const;
  std::vector<int64_t> indices() const;  // materialized, for small n (tests, JSON)
  std::vector<uint8_t> flags() const;
};

// Positions of a segment below its order's n: those are real samples (no wrap, no
// padding flag); the rest wrap round to the order's start as padding.
inline int64_t unwrapped_count(const Segment& s) {
  if (s.stride <= 0) return s.start < s.order->n ? s.count : 0;
  if (s.start >= s.order->n) return 0;
  return std::min(s.count, (s.order->n - s.start + s.stride - 1) / s.stride);
}

// Calls f(index, flags) for every element in order. Header-inline: it is the hot loop, so
// the identity-or-permutation and wrap-or-not decisions are made once per segment, not
// once per element.
template <class F>
void for_each_element(const RankSequence& seq, F&& f) {
  for (const Segment& s : seq.segments) {
    const Order& o = *s.order;
    const int64_t direct = unwrapped_count(s);
    int64_t pos = s.start;
    int64_t k = 0;
    if (o.perm.empty()) {
      for (; k < direct; ++k, pos += s.stride) f(pos, s.flags);
    } else {
      const uint32_t* perm = o.perm.data();
      for (; k < direct; ++k, pos += s.stride) f(static_cast<int64_t>(perm[pos]), s.flags);
    }
    for (; k < s.count; ++k, pos += s.stride) {
      f(o.at(pos % o.n), static_cast<uint8_t>(s.flags | (pos >= o.n ? kPadding : 0)));
    }
  }
}

// num_samples per rank of a DistributedSampler (torch's exact formula; docs/ARCHITECTURE.md,
// "Semantics reproduced").
int64_t distributed_num_samples(int64_t n, int world_size, bool drop_last);

// detectron2's InferenceSampler: rank r's contiguous shard [begin, begin + size).
struct ContiguousShard {
  int64_t begin = 0;
  int64_t size = 0;
};
ContiguousShard inference_shard(int64_t n, int world_size, int rank);

// The sampler's output for every rank; padding included. Accelerate's sampler shards the
// loader's batches, so it needs the loader: see plan_shards (loader.h).
std::vector<RankSequence> sample(int64_t n, const SamplerConfig& config);

// Appends positions [start, start + count) of `order` to a rank, merging with the previous
// segment where the positions continue its stride (one segment for a strided shard).
void append_run(RankSequence& seq, const std::shared_ptr<const Order>& order, int64_t start,
                int64_t count);

std::string to_string(SamplerKind kind);
SamplerKind parse_sampler_kind(const std::string& text);  // throws InputError

}  // namespace shardlens

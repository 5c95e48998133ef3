#include "core/torchsem/sampler.h"

#include <map>

#include "core/torchsem/lightning_wrapper.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

int64_t RankSequence::size() const {
  int64_t total = 0;
  for (const Segment& s : segments) total += s.count;
  return total;
}

RankSequence RankSequence::prefix(int64_t count) const {
  RankSequence out;
  for (const Segment& s : segments) {
    if (count <= 0) break;
    Segment cut = s;
    cut.count = std::min(s.count, count);
    count -= cut.count;
    out.segments.push_back(cut);
  }
  return out;
}

std::vector<int64_t> RankSequence::indices() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(size()));
  for_each_element(*this, [&](int64_t index, uint8_t) { out.push_back(index); });
  return out;
}

std::vector<uint8_t> RankSequence::flags() const {
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(size()));
  for_each_element(*this, [&](int64_t, uint8_t f) { out.push_back(f); });
  return out;
}

int64_t distributed_num_samples(int64_t n, int world_size, bool drop_last) {
  if (drop_last && n % world_size != 0) {
    // ceil((n - W) / W), 0 when n < W (torch computes it in floating point, then ceil).
    return n < world_size ? 0 : (n - world_size + world_size - 1) / world_size;
  }
  return (n + world_size - 1) / world_size;
}

ContiguousShard inference_shard(int64_t n, int world_size, int rank) {
  const int64_t base = n / world_size;
  const int64_t longer = n % world_size;  // ranks below it hold one sample more
  return {rank * base + std::min<int64_t>(rank, longer), base + (rank < longer ? 1 : 0)};
}

namespace {

// Orders are shared between ranks with the same seed: one permutation serves them all.
class OrderCache {
 public:
  OrderCache(int64_t n, const SamplerConfig& c) : m_n(n), m_config(c) {}

  std::shared_ptr<const Order> get(bool shuffle, int64_t seed) {
    const int64_t key = shuffle ? seed : INT64_MIN;
    auto it = m_orders.find(key);
    if (it != m_orders.end()) return it->second;
    auto order = std::make_shared<Order>();
    order->n = m_n;
    if (shuffle) order->perm = randperm(m_n, seed, m_config.torch);
    m_orders[key] = order;
    return order;
  }

 private:
  int64_t m_n;
  const SamplerConfig& m_config;
  std::map<int64_t, std::shared_ptr<const Order>> m_orders;
};

int64_t rank_seed(const SamplerConfig& c, int rank) {
  return c.rank_seeds.empty() ? c.seed : c.rank_seeds[static_cast<size_t>(rank)];
}

Segment segment(std::shared_ptr<const Order> order, int64_t start, int64_t stride, int64_t count) {
  Segment s;
  s.order = std::move(order);
  s.start = start;
  s.stride = stride;
  s.count = std::max<int64_t>(count, 0);
  return s;
}

void validate(int64_t n, const SamplerConfig& c) {
  check_world_size(c.world_size);
  if (!c.rank_seeds.empty() && static_cast<int>(c.rank_seeds.size()) != c.world_size) {
    throw InputError("--rank-seeds: " + std::to_string(c.rank_seeds.size()) +
                     " seeds given for world size " + std::to_string(c.world_size));
  }
  if (n <= 0) throw InputError("dataset: it has no samples");
  if (c.epoch < 0) throw InputError("--epoch: must not be negative");
}

}  // namespace

void append_run(RankSequence& seq, const std::shared_ptr<const Order>& order, int64_t start,
                int64_t count) {
  if (count <= 0) return;
  if (!seq.segments.empty()) {
    Segment& last = seq.segments.back();
    const bool same = last.order == order && last.flags == 0 && last.stride > 0;
    if (same && last.count == 1 && start > last.start && (count == 1 || start == last.start + 1)) {
      last.stride = count == 1 ? start - last.start : 1;
      last.count += count;
      return;
    }
    const int64_t next = last.start + last.stride * last.count;
    if (same && next == start && (count == 1 || last.stride == 1)) {
      last.count += count;
      return;
    }
  }
  seq.segments.push_back(segment(order, start, 1, count));
}

std::vector<RankSequence> sample(int64_t n, const SamplerConfig& c) {
  validate(n, c);
  if (c.kind == SamplerKind::Accelerate) {
    throw InputError("--sampler accelerate: shards the loader's batches; plan it with the loader");
  }
  if (c.kind == SamplerKind::LightningWrapper) return sample_lightning_wrapper(n, c);
  OrderCache orders(n, c);
  const int w = c.world_size;
  std::vector<RankSequence> ranks(static_cast<size_t>(w));
  for (int r = 0; r < w; ++r) {
    Segment s;
    switch (c.kind) {
      case SamplerKind::Distributed:
        s = segment(orders.get(c.shuffle, rank_seed(c, r) + c.epoch), r, w,
                    distributed_num_samples(n, w, c.drop_last));
        break;
      case SamplerKind::Unrepeated:
        // Lightning seeds the unrepeated sampler with the epoch alone.
        s = segment(
            orders.get(c.shuffle, c.rank_seeds.empty() ? c.epoch : rank_seed(c, r) + c.epoch), r, w,
            (n - r + w - 1) / w);
        break;
      case SamplerKind::Sequential: {
        const int64_t chunk = (n + w - 1) / w;
        s = segment(orders.get(c.shuffle, rank_seed(c, r) + c.epoch), r * chunk, 1,
                    std::min(chunk, n - r * chunk));
        break;
      }
      case SamplerKind::None:
        s = segment(orders.get(c.shuffle, rank_seed(c, r) + c.epoch), 0, 1, n);
        break;
      case SamplerKind::MmengineDefault:
        // round_up pads exactly as DistributedSampler(drop_last=False) does.
        s = segment(orders.get(c.shuffle, rank_seed(c, r) + c.epoch), r, w,
                    c.round_up ? distributed_num_samples(n, w, false) : (n - r + w - 1) / w);
        break;
      case SamplerKind::Detectron2Inference: {
        // Never shuffled: the dataset order, cut into contiguous shards.
        const ContiguousShard shard = inference_shard(n, w, r);
        s = segment(orders.get(false, 0), shard.begin, 1, shard.size);
        break;
      }
      case SamplerKind::Accelerate:
      case SamplerKind::LightningWrapper:
        break;  // handled above
    }
    ranks[static_cast<size_t>(r)].segments.push_back(s);
  }
  return ranks;
}

std::string to_string(SamplerKind kind) {
  switch (kind) {
    case SamplerKind::Distributed:
      return "distributed";
    case SamplerKind::Unrepeated:
      return "unrepeated";
    case SamplerKind::Sequential:
      return "sequential";
    case SamplerKind::None:
      return "none";
    case SamplerKind::Accelerate:
      return "accelerate";
    case SamplerKind::LightningWrapper:
      return "lightning-wrapper";
    case SamplerKind::MmengineDefault:
      return "mmengine-default";
    case SamplerKind::Detectron2Inference:
      return "detectron2-inference";
  }
  return "distributed";
}

std::string to_string(InnerSampler::Kind kind) {
  switch (kind) {
    case InnerSampler::Kind::Sequential:
      return "sequential";
    case InnerSampler::Kind::WeightedRandom:
      return "weighted-random";
    case InnerSampler::Kind::Recorded:
      return "recorded";
  }
  return "sequential";
}

InnerSampler::Kind parse_inner_sampler_kind(const std::string& text) {
  for (auto k : {InnerSampler::Kind::Sequential, InnerSampler::Kind::WeightedRandom,
                 InnerSampler::Kind::Recorded}) {
    if (to_string(k) == text) return k;
  }
  throw InputError("--inner-sampler: '" + text +
                   "' is not one of sequential, weighted-random, recorded");
}

SamplerKind parse_sampler_kind(const std::string& text) {
  for (SamplerKind k : {SamplerKind::Distributed, SamplerKind::Unrepeated, SamplerKind::Sequential,
                        SamplerKind::None, SamplerKind::Accelerate, SamplerKind::LightningWrapper,
                        SamplerKind::MmengineDefault, SamplerKind::Detectron2Inference}) {
    if (to_string(k) == text) return k;
  }
  throw InputError("--sampler: '" + text +
                   "' is not one of distributed, unrepeated, sequential, none, accelerate, "
                   "lightning-wrapper, mmengine-default, detectron2-inference");
}

std::string to_string(AccelerateInput v) {
  switch (v) {
    case AccelerateInput::Loader:
      return "loader";
    case AccelerateInput::DistributedSampler:
      return "distributed-sampler";
    case AccelerateInput::IterableDispatch:
      return "iterable-dispatch";
  }
  return "loader";
}

AccelerateInput parse_accelerate_input(const std::string& text) {
  for (auto v : {AccelerateInput::Loader, AccelerateInput::DistributedSampler,
                 AccelerateInput::IterableDispatch})
    if (to_string(v) == text) return v;
  throw InputError("--accelerate-input: '" + text +
                   "' is not one of loader, distributed-sampler, iterable-dispatch");
}

std::string to_string(AccelerateShuffle v) {
  return v == AccelerateShuffle::Seedable ? "seedable" : "global-rng";
}

AccelerateShuffle parse_accelerate_shuffle(const std::string& text) {
  for (auto v : {AccelerateShuffle::GlobalRng, AccelerateShuffle::Seedable})
    if (to_string(v) == text) return v;
  throw InputError("--accelerate-shuffle: '" + text + "' is not one of global-rng, seedable");
}

}  // namespace shardlens

#include "core/torchsem/accelerate_sampler.h"

#include <algorithm>

#include "core/vocabulary/limits.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

// Positions [start, start + count) of the list a rank's BatchSamplerShard walks; positions
// past the list's end are its cycled padding (position modulo the list's length).
struct Run {
  int64_t start = 0;
  int64_t count = 0;
};

// One rank's batches under BatchSamplerShard (accelerate/data_loader.py, _iter_with_split and
// _iter_with_no_split) over a list of m positions batched by B. `drop_last` is the wrapped
// BatchSampler's, i.e. the loader's.
std::vector<Run> shard_runs(int64_t m, int64_t b, int64_t w, int64_t r, bool split, bool even,
                            bool drop_last) {
  // One process: prepare() leaves the batch sampler as it is (no BatchSamplerShard), so a
  // short last batch stays short whatever even_batches says.
  if (w == 1) even = false;
  std::vector<Run> out;
  const int64_t full = m / b;         // full batches of the loader
  const int64_t last = m - full * b;  // the last batch's length (0: none short)
  if (split) {
    const int64_t slice = b / w;
    for (int64_t k = 0; k < full; ++k) out.push_back({k * b + r * slice, slice});
    // A short last batch is completed from the start of the list (even_batches), or each
    // rank takes what its slice still holds.
    if (last > 0 && !drop_last) {
      const int64_t begin = r * slice;
      if (even) {
        out.push_back({full * b + begin, slice});
      } else if (last > begin) {
        out.push_back({full * b + begin, std::min(slice, last - begin)});
      }
    }
    return out;
  }
  const int64_t batches = drop_last ? full : full + (last > 0);
  int64_t dealt = batches;  // without even_batches the last round ends where the batches do
  if (drop_last) {
    dealt = batches / w * w;  // a round is yielded once its last batch is full: whole rounds
  } else if (even) {
    dealt = (batches + w - 1) / w * w;  // the last round completed from the start of the list
  }
  for (int64_t k = r; k < dealt; k += w) {
    // Only a loader without drop_last has a short batch, and even_batches completes it.
    const bool short_batch = !drop_last && !even && k == batches - 1 && last > 0;
    out.push_back({k * b, short_batch ? last : b});
  }
  return out;
}

// One rank's batches under Accelerate's DataLoaderDispatcher (dispatch_batches, the default
// for an IterableDataset): rank 0 reads W batches of B a step and hands rank r the slice
// [r B, (r + 1) B) of their concatenation, item k of the stream being dataset index k. A last
// round of m < W B items is split evenly: each rank takes ceil(m / W) of it, the positions
// past the stream's end completed from its first items (position modulo the list's length),
// which gather_for_metrics cuts by the loader's remainder. Checked against the HF Trainer
// running (tests/python/test_hf_trainer.py).
std::vector<Run> dispatch_runs(int64_t m, int64_t b, int64_t w, int64_t r) {
  std::vector<Run> out;
  const int64_t round = b * w;
  const int64_t rounds = m / round;
  for (int64_t k = 0; k < rounds; ++k) out.push_back({k * round + r * b, b});
  const int64_t last = m - rounds * round;
  if (last > 0) {
    const int64_t width = (last + w - 1) / w;
    out.push_back({rounds * round + r * width, width});
  }
  return out;
}

// Appends a segment, extending the previous one where it continues it.
void append_segment(RankSequence& seq, const Segment& s) {
  if (s.count <= 0) return;
  if (!seq.segments.empty()) {
    Segment& prev = seq.segments.back();
    if (prev.order == s.order && prev.flags == s.flags && prev.stride == s.stride &&
        prev.start + prev.stride * prev.count == s.start) {
      prev.count += s.count;
      return;
    }
  }
  seq.segments.push_back(s);
}

// The order a shuffled loader draws in epoch (iteration) e, or the identity.
std::shared_ptr<const Order> loader_order(int64_t n, const SamplerConfig& c) {
  auto order = std::make_shared<Order>();
  order->n = n;
  if (!c.shuffle) return order;
  if (c.accelerate_input == AccelerateInput::DistributedSampler ||
      c.accelerate_shuffle == AccelerateShuffle::Seedable) {
    // DistributedSampler and SeedableRandomSampler: randperm(n) seeded seed + epoch.
    order->perm = randperm(n, c.seed + c.epoch, c.torch);
  } else if (c.world_size == 1) {
    // One process: prepare() leaves the RandomSampler without a generator, so every
    // iteration draws from the global RNG twice, two 32-bit draws each: the DataLoader
    // iterator's base seed, then the sampler's own seed for randperm(n).
    order->perm = randperm(n, random_int64(c.seed, 4 * c.epoch + 2), c.torch);
  } else {
    // prepare() seeds the RandomSampler's generator with int64 random_() of the global RNG;
    // each iteration's RandomSampler.__iter__ draws randperm(n) and, run to its end, a
    // second randperm(n) it slices to nothing ([: num_samples % n]): two calls per epoch.
    order->perm = randperm_nth(n, random_int64(c.seed), 2 * c.epoch, c.torch);
  }
  return order;
}

}  // namespace

AccelerateShards accelerate_shards(int64_t n, const SamplerConfig& c, int64_t b,
                                   bool loader_drop_last) {
  const int64_t w = c.world_size;
  check_world_size(w);
  if (c.epoch < 0) throw InputError("--epoch: must not be negative");
  if (b < 1) throw InputError("--batch-size: must be at least 1");
  if (c.split_batches && b % w != 0) {
    throw InputError("--split-batches: the batch size (" + std::to_string(b) +
                     ") must be a round multiple of the number of processes (" + std::to_string(w) +
                     "), as Accelerate requires");
  }
  const bool dispatched = c.accelerate_input == AccelerateInput::IterableDispatch;
  if (dispatched && (c.split_batches || c.shuffle || loader_drop_last)) {
    throw InputError(
        "--accelerate-input iterable-dispatch: Accelerate's DataLoaderDispatcher is simulated "
        "for a stream read in order, batches of B dealt whole (no --split-batches, --shuffle "
        "or --loader-drop-last); record such a run instead (the recorder's dumps hold what "
        "each rank evaluated)");
  }
  const bool inner_distributed = c.accelerate_input == AccelerateInput::DistributedSampler;
  if (c.drop_last && !inner_distributed) {
    throw InputError(
        "--sampler-drop-last: Accelerate has no sampler drop_last; use "
        "--loader-drop-last (the DataLoader's drop_last), or --accelerate-input "
        "distributed-sampler for a DistributedSampler(drop_last=True) inside the loader");
  }
  if (!c.rank_seeds.empty()) {
    throw InputError("--rank-seeds: Accelerate's samplers use one seed on every rank");
  }
  const std::shared_ptr<const Order> order = loader_order(n, c);

  AccelerateShards out;
  out.ranks.resize(static_cast<size_t>(w));
  out.rank_batch_size = c.split_batches ? b / w : b;
  out.total_batch_size = c.split_batches ? b : b * w;
  for (int64_t r = 0; r < w; ++r) {
    RankSequence& seq = out.ranks[size_t(r)];
    if (!inner_distributed) {
      // The loader's list is the shared order itself: positions past n are the cycled padding.
      for (const Run& run :
           dispatched ? dispatch_runs(n, b, w, r)
                      : shard_runs(n, b, w, r, c.split_batches, c.even_batches, loader_drop_last))
        append_run(seq, order, run.start, run.count);
      continue;
    }
    // The loader's list on rank r is its DistributedSampler shard: positions r, r + W, ... of
    // the order (num_samples of them, the sampler's own padding past n). BatchSamplerShard
    // then keeps this rank's 1/W of it, so list position p is order position r + p W.
    const int64_t m = distributed_num_samples(n, static_cast<int>(w), c.drop_last);
    if (m == 0) continue;
    for (const Run& run :
         shard_runs(m, b, w, r, c.split_batches, c.even_batches, loader_drop_last)) {
      for (int64_t p = run.start, end = run.start + run.count; p < end;) {
        const int64_t q = p % m;
        const int64_t len = std::min(end - p, m - q);
        Segment s;
        s.order = order;
        s.start = r + q * w;
        s.stride = w;
        s.count = len;
        s.flags = p >= m ? kPadding : 0;  // BatchSamplerShard's cycled copy of its own list
        append_segment(seq, s);
        p += len;
      }
    }
  }
  return out;
}

std::string accelerate_order_note(const SamplerConfig& c) {
  if (c.kind != SamplerKind::Accelerate || !c.shuffle ||
      c.accelerate_input != AccelerateInput::Loader ||
      c.accelerate_shuffle != AccelerateShuffle::GlobalRng) {
    return {};
  }
  return "the shuffled order is Accelerate's default (use_seedable_sampler=False): exact when "
         "torch.manual_seed(" +
         std::to_string(c.seed) +
         ") (or accelerate's set_seed) ran right before accelerator.prepare() with no draw "
         "from the global RNG in between (a model's initialisation draws from it), else only "
         "representative; a recorded run (the recorder's dumps) is exact, and "
         "use_seedable_sampler=True (--accelerate-shuffle seedable) makes the order depend on "
         "the seed alone";
}

void use_plan_batches(SyncInputs& sync, const ShardPlan& plan, const LoaderConfig& loader) {
  sync.batch_size = plan.batch_size;
  sync.loader_exhausted = plan_exhausted(plan, loader);
}

}  // namespace shardlens

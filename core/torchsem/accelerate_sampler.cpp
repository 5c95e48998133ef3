#include "core/torchsem/accelerate_sampler.h"

#include "core/model/limits.h"
#include "core/model/types.h"

namespace shardlens {

AccelerateShards accelerate_shards(int64_t n, const SamplerConfig& c, int64_t b,
                                   bool loader_drop_last) {
  const int64_t w = c.world_size;
  if (w < 1 || w > kMaxSimulatedWorldSize) {
    throw InputError("--world-size: " + std::to_string(w) + " is out of range (1 to " +
                     std::to_string(kMaxSimulatedWorldSize) + ")");
  }
  if (c.epoch < 0) throw InputError("--epoch: must not be negative");
  if (b < 1) throw InputError("--batch-size: must be at least 1");
  if (c.split_batches && b % w != 0) {
    throw InputError("--split-batches: the batch size (" + std::to_string(b) +
                     ") must be a round multiple of the number of processes (" + std::to_string(w) +
                     "), as Accelerate requires");
  }
  if (c.drop_last) {
    throw InputError(
        "--sampler-drop-last: Accelerate has no sampler drop_last; use "
        "--loader-drop-last (the DataLoader's drop_last)");
  }
  if (!c.rank_seeds.empty()) {
    throw InputError("--rank-seeds: Accelerate's seedable sampler uses one seed on every rank");
  }
  auto order = std::make_shared<Order>();
  order->n = n;
  // SeedableRandomSampler: torch.randperm(n) with a generator seeded seed + epoch.
  if (c.shuffle) order->perm = randperm(n, c.seed + c.epoch, c.torch);
  std::shared_ptr<const Order> shared = order;

  AccelerateShards out;
  out.ranks.resize(static_cast<size_t>(w));
  const int64_t full = n / b;         // full batches of the loader
  const int64_t last = n - full * b;  // the last batch's length (0: none short)
  if (c.split_batches) {
    const int64_t slice = b / w;
    out.rank_batch_size = slice;
    out.total_batch_size = b;
    for (int64_t k = 0; k < full; ++k) {
      for (int64_t r = 0; r < w; ++r)
        append_run(out.ranks[size_t(r)], shared, k * b + r * slice, slice);
    }
    if (last > 0 && !loader_drop_last) {
      for (int64_t r = 0; r < w; ++r) {
        const int64_t begin = r * slice;
        if (c.even_batches) {
          append_run(out.ranks[size_t(r)], shared, full * b + begin, slice);
        } else if (last > begin) {
          append_run(out.ranks[size_t(r)], shared, full * b + begin, std::min(slice, last - begin));
        }
      }
    }
    return out;
  }
  out.rank_batch_size = b;
  out.total_batch_size = b * w;
  const int64_t batches = loader_drop_last ? full : full + (last > 0);
  int64_t dealt = 0;  // batches dealt to ranks
  if (loader_drop_last) {
    dealt = batches / w * w;  // only whole rounds
  } else if (c.even_batches) {
    dealt = (batches + w - 1) / w * w;  // the last round completed from the start of the order
  } else {
    dealt = batches;  // the last round ends where the batches do
  }
  for (int64_t k = 0; k < dealt; ++k) {
    const int64_t start = k * b;
    const int64_t count = (!c.even_batches && k == batches - 1 && last > 0) ? last : b;
    append_run(out.ranks[size_t(k % w)], shared, start, count);
  }
  return out;
}

void use_plan_batches(SyncInputs& sync, const ShardPlan& plan, const LoaderConfig& loader) {
  sync.batch_size = plan.batch_size;
  sync.loader_exhausted = plan_exhausted(plan, loader);
}

}  // namespace shardlens

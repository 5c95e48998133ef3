#include "core/realrun/rank_loop.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <thread>

#include "core/dataset/dataset_images.h"
#include "core/sim/specs.h"
#include "core/torchsem/loader.h"
#include "core/torchsem/sync.h"
#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

// Test hook (documented in tests/integration): SHARDLENS_TEST_FAULT=kill:R:B, hang:R:B or
// pause:R:B makes rank R die (SIGKILL), hang, or stop for 4 s after B batches, to test
// failure handling (and a store's peers while the run waits) for real.
void maybe_inject_fault(int rank, int64_t batches_done) {
  static const std::optional<std::string> spec = [] {
    const char* v = std::getenv("SHARDLENS_TEST_FAULT");
    return v && *v ? std::optional<std::string>(v) : std::nullopt;
  }();
  if (!spec) return;
  char kind[8] = {};
  int r = -1;
  long b = -1;
  if (std::sscanf(spec->c_str(), "%7[a-z]:%d:%ld", kind, &r, &b) != 3) return;
  if (r != rank || b != batches_done) return;
  if (std::strcmp(kind, "kill") == 0) std::raise(SIGKILL);
  if (std::strcmp(kind, "hang") == 0) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (std::strcmp(kind, "pause") == 0) std::this_thread::sleep_for(std::chrono::seconds(4));
}

}  // namespace

RunDataset load_run_dataset(const RealRunConfig& cfg) {
  RunDataset d;
  d.labels = load_labels(cfg.scenario.dataset);
  const std::string images =
      cfg.images_path.empty() ? dataset_images_path(cfg.scenario.dataset) : cfg.images_path;
  d.images = read_idx_images(images);
  if (!d.labels.source_indices.empty()) {
    // A subset of the dataset: its images, in the subset's order.
    IdxImages subset;
    subset.rows = d.images.rows;
    subset.cols = d.images.cols;
    subset.count = d.labels.size();
    const size_t bytes = size_t(d.images.rows) * size_t(d.images.cols);
    subset.pixels.resize(size_t(subset.count) * bytes);
    for (size_t k = 0; k < d.labels.source_indices.size(); ++k) {
      const int64_t i = d.labels.source_indices[k];
      if (i >= d.images.count)
        throw InputError(images + ": no image " + std::to_string(i) + " (the file has " +
                         std::to_string(d.images.count) + ")");
      std::copy_n(d.images.pixels.begin() + ptrdiff_t(size_t(i) * bytes), bytes,
                  subset.pixels.begin() + ptrdiff_t(k * bytes));
    }
    d.images = std::move(subset);
  }
  if (d.images.count != d.labels.size()) {
    throw InputError(images + ": " + std::to_string(d.images.count) + " images for " +
                     std::to_string(d.labels.size()) + " labels");
  }
  return d;
}

RankOutput evaluate_rank(const Scenario& scenario, const RunDataset& data, int rank, int world,
                         BatchClassifier& model, BatchCounter* counter, Progress* progress) {
  SamplerConfig sampler = scenario.sampler;
  sampler.world_size = world;
  const ShardPlan plan = plan_shards(data.labels.size(), sampler, scenario.loader);
  if (per_step_collective(scenario.sync)) {
    const StepLayout layout = step_layout(plan);
    if (layout.different_steps())
      throw InputError(
          "the ranks run different step counts (Accelerate even_batches=False), so "
          "the per-step " +
          to_string(scenario.sync) + " would hang (uneven-steps)");
    if (layout.unequal_last_batches() && !scenario.pad_across_processes)
      throw InputError(
          "the ranks' last batches differ in size (Accelerate even_batches=False), "
          "so the per-step " +
          to_string(scenario.sync) +
          " fails on unequal sizes (unequal-last-batches); "
          "--pad-across-processes pads them as pad_across_processes does");
  }
  LoaderConfig loader = scenario.loader;
  loader.batch_size = plan.batch_size;  // Accelerate's split batches: B / W per rank
  const EvaluatedRank& mine = plan.evaluated.at(size_t(rank));
  const std::vector<int64_t> indices = mine.sequence.indices();
  const std::vector<uint8_t> flags = mine.sequence.flags();
  const int32_t classes = data.labels.num_classes;

  RankOutput out;
  out.local = Matrix(classes);
  out.loader_exhausted = mine.batches == batches_per_rank(mine.sampler_size, loader) &&
                         !(sampler.kind == SamplerKind::Accelerate && loader.drop_last);
  out.rank_batch_size = plan.batch_size;
  const size_t image_bytes = size_t(data.images.rows) * size_t(data.images.cols);
  std::vector<uint8_t> pixels;
  std::vector<int32_t> targets;
  const int64_t batch = loader.batch_size;
  size_t begin = 0;
  while (begin < indices.size()) {
    // A batch ends at batch_size or where the sanity-check batches give way to the epoch's.
    size_t end = begin;
    while (end < indices.size() && int64_t(end - begin) < batch &&
           (flags[end] & kSanity) == (flags[begin] & kSanity)) {
      ++end;
    }
    pixels.resize((end - begin) * image_bytes);
    for (size_t i = begin; i < end; ++i) {
      std::memcpy(pixels.data() + (i - begin) * image_bytes,
                  data.images.pixels.data() + size_t(indices[i]) * image_bytes, image_bytes);
    }
    const auto preds = model.predict(pixels.data(), int64_t(end - begin), data.images.rows,
                                     data.images.cols, classes);
    if (preds.size() != end - begin) {
      throw InputError("the model returned " + std::to_string(preds.size()) +
                       " predictions for a batch of " + std::to_string(end - begin));
    }
    Matrix counts(classes);
    targets.clear();
    for (size_t i = begin; i < end; ++i) {
      const int32_t target = data.labels.targets[size_t(indices[i])];
      const int32_t pred = preds[i - begin];
      if (pred < 0 || pred >= classes) {
        throw InputError("the model predicted class " + std::to_string(pred) + " of " +
                         std::to_string(classes));
      }
      out.records.push_back(Record{indices[i], target, pred, flags[i]});
      targets.push_back(target);
    }
    if (counter) {
      counter->count(targets, preds, scenario.ignore_index, counts.cells);
    } else {
      count_records(counts, std::span(out.records).last(end - begin), scenario.ignore_index);
    }
    for (size_t k = 0; k < counts.cells.size(); ++k) {
      out.local.cells[k] = round_to_dtype(out.local.cells[k] + counts.cells[k], scenario.dtype);
    }
    ++out.batches;
    begin = end;
    step(progress, "evaluating", double(begin) / double(indices.size()));
    maybe_inject_fault(rank, out.batches);
  }
  return out;
}

void run_rank_body(const Scenario& scenario, const RunDataset& data, int rank, int world,
                   RankStore& store, RankCollectives& collectives, BatchCounter* counter,
                   BatchClassifier& model, Progress* progress) {
  const RankOutput out = evaluate_rank(scenario, data, rank, world, model, counter, progress);
  publish(store, key_records(rank), encode_records(out.records));
  publish(store, key_matrix(rank), encode_matrix(out.local));
  step(progress, "synchronizing", 0.0);
  const RealSync sync = synchronize_for_real(collectives, scenario, out, world, data.labels.size());
  if (rank == 0) {
    if (!sync.note.empty()) publish(store, kKeySyncNote, encode_text(sync.note));
    publish(store, kKeySynced, encode_matrix(sync.reported));
  }
  publish(store, key_done(rank), Bytes{1});
}

}  // namespace shardlens

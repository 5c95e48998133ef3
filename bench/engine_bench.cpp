// Engine benchmark: per-rank and synced confusion matrices for a shuffled DistributedSampler
// evaluation from recorded predictions (docs/TARGETS.md). bench/peer.py times
// the same work in PyTorch; scripts/bench.sh runs both and prints the ratios.
//
// The labels and predictions come from the same integer hash as bench/peer.py, so both
// sides print the same checksum of the synced matrix: a fast wrong answer does not count.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/sim/engine.h"
#include "core/torchsem/loader.h"
#include "core/torchsem/sync.h"
#include "core/vocabulary/progress.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Options {
  int64_t n = 10'000'000;
  int32_t classes = 1000;
  int world = 8;
  int repeats = 3;
  int64_t seed = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (flag == "--n")
      o.n = v;
    else if (flag == "--classes")
      o.classes = static_cast<int32_t>(v);
    else if (flag == "--world-size")
      o.world = static_cast<int>(v);
    else if (flag == "--repeats")
      o.repeats = static_cast<int>(std::max(1LL, v));
    else if (flag == "--seed")
      o.seed = v;
    else {
      std::fprintf(stderr, "engine_bench: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

// Must match bench/peer.py's make_data bit for bit (uint64 arithmetic wraps on both sides).
void make_data(int64_t n, int32_t c, std::vector<int32_t>& targets, std::vector<int32_t>& preds) {
  targets.resize(static_cast<size_t>(n));
  preds.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t h = (static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull) >> 32;
    const auto t = static_cast<int32_t>(h % static_cast<uint64_t>(c));
    const bool correct = ((h >> 16) & 0xFF) < 230;  // about 90% accuracy
    targets[static_cast<size_t>(i)] = t;
    preds[static_cast<size_t>(i)] =
        correct ? t : static_cast<int32_t>((h >> 8) % static_cast<uint64_t>(c));
  }
}

// Sum of count * cell index over the synced matrix (cell index = target * C + prediction).
long long checksum(const shardlens::Matrix& m) {
  long long sum = 0;
  for (size_t k = 0; k < m.cells.size(); ++k) sum += static_cast<long long>(m.cells[k]) * k;
  return sum;
}

// Runs f `repeats` times and keeps the fastest: the box is shared, the minimum is the
// least disturbed measurement.
template <class F>
double best_of(int repeats, F&& f) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    f();
    best = std::min(best, seconds_since(start));
  }
  return best;
}

// Splits evaluate() into its stages by the progress reports it makes on entering each one,
// so the report says where the time beyond the core path goes.
class StageClock : public shardlens::Progress {
 public:
  void report(std::string_view stage, double) override {
    if (!m_stages.empty() && m_stages.back().first == stage) return;
    const auto now = Clock::now();
    if (!m_stages.empty()) m_stages.back().second += seconds_since(m_last);
    m_last = now;
    if (stage != "done") m_stages.emplace_back(std::string(stage), 0.0);
  }
  const std::vector<std::pair<std::string, double>>& stages() const { return m_stages; }

 private:
  Clock::time_point m_last;
  std::vector<std::pair<std::string, double>> m_stages;
};

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace shardlens;
  const Options o = parse(argc, argv);

  auto labels = std::make_shared<Labels>();
  labels->num_classes = o.classes;
  std::vector<int32_t> preds;
  make_data(o.n, o.classes, labels->targets, preds);

  std::shared_ptr<const DatasetInputs> inputs;
  const double t_inputs = best_of(1, [&] { inputs = make_inputs(labels, preds); });
  preds = {};  // the engine keeps only its packed keys

  Scenario s;
  s.sampler.kind = SamplerKind::Distributed;
  s.sampler.world_size = o.world;
  s.sampler.shuffle = true;
  s.sampler.seed = o.seed;
  s.sampler.epoch = 0;
  s.loader.batch_size = 256;  // int64 counters do not depend on batching

  ShardPlan plan;
  std::vector<Matrix> per_rank;
  Matrix synced;
  const double t_plan = best_of(o.repeats, [&] { plan = plan_shards(o.n, s.sampler, s.loader); });
  const double t_accumulate = best_of(
      o.repeats, [&] { per_rank = accumulate(plan, *inputs, CounterDtype::Int64, -1, nullptr); });
  const double t_sync = best_of(o.repeats, [&] {
    SyncInputs in;
    in.per_rank = &per_rank;
    in.dataset_size = o.n;
    in.batch_size = s.loader.batch_size;
    synced = synchronize(SyncStrategy::AllReduce, in);
  });
  // The whole path the target speaks of, end to end in one go (not a sum of minima).
  const double cpu_before = cpu_seconds();
  const double t_core = best_of(o.repeats, [&] {
    const ShardPlan p = plan_shards(o.n, s.sampler, s.loader);
    std::vector<Matrix> m = accumulate(p, *inputs, CounterDtype::Int64, -1, nullptr);
    SyncInputs in;
    in.per_rank = &m;
    in.dataset_size = o.n;
    synced = synchronize(SyncStrategy::AllReduce, in);
  });
  const double cpu_core = (cpu_seconds() - cpu_before) / o.repeats;
  Matrix evaluated_synced;
  const double t_evaluate = best_of(o.repeats, [&] {
    const Evaluation e = evaluate(s, inputs);
    evaluated_synced = *e.synced;
  });
  StageClock stages;
  evaluate(s, inputs, &stages);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("engine_bench: n=%lld C=%d W=%d shuffled, best of %d\n", static_cast<long long>(o.n),
              o.classes, o.world, o.repeats);
  std::printf("  make_inputs   %8.3f s  (pack target * C + prediction, once)\n", t_inputs);
  std::printf("  plan_shards   %8.3f s  (one randperm serves all ranks)\n", t_plan);
  std::printf("  accumulate    %8.3f s\n", t_accumulate);
  std::printf("  synchronize   %8.3f s\n", t_sync);
  std::printf("  core total    %8.3f s  (plan + accumulate + sync; %.3f s CPU per run)\n", t_core,
              cpu_core);
  std::printf("  evaluate      %8.3f s  (also expected, duplicates, diagnosis)\n", t_evaluate);
  for (const auto& [stage, seconds] : stages.stages()) {
    std::printf("    %-14s %6.3f s\n", stage.c_str(), seconds);
  }
  std::printf("  max RSS       %8.1f MB\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
  std::printf(
      "RESULT core_s=%.6f evaluate_s=%.6f plan_s=%.6f accumulate_s=%.6f core_cpu_s=%.6f "
      "checksum=%lld\n",
      t_core, t_evaluate, t_plan, t_accumulate, cpu_core, checksum(synced));
  if (checksum(evaluated_synced) != checksum(synced)) {
    std::fprintf(stderr, "engine_bench: evaluate() and the core path disagree\n");
    return 1;
  }
  return 0;
}

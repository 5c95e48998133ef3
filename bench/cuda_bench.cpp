// Bandwidth of the CUDA confusion-matrix kernel (docs/TARGETS.md: at least
// half of the device's memory bandwidth). Accumulates n (target, prediction) int32 pairs
// already on the device, 8 bytes read per pair, and reports the achieved GB/s as a fraction
// of the device's theoretical peak.
//
// Usage: cuda_bench [--n N] [--classes C,C,...] [--accuracy A] [--repeats R] [--device D]
// Defaults: n = 1e9 (8 GB read), halved to 5e8 (and said so) when the device lacks room;
// C = 10 (the shared-memory path, the reference model's case) and 1000 (global atomics with
// a shared diagonal); A = 0.9, the share of pairs on the diagonal, as a trained classifier
// gives (A = 0 spreads the pairs uniformly: the worst case for C = 1000).
// Exits 0 on success, 1 when a count is wrong, 77 when there is no CUDA device.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "core/cuda/cuda_backend.h"

namespace cuda = shardlens::cuda;

namespace {

struct Options {
  int64_t n = 1000000000;
  bool n_given = false;
  std::vector<int32_t> classes = {10, 1000};
  double accuracy = 0.9;
  int repeats = 5;
  int device = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--n") {
      o.n = int64_t(std::strtod(value, nullptr));  // accepts 1e9
      o.n_given = true;
    } else if (flag == "--accuracy") {
      o.accuracy = std::strtod(value, nullptr);
    } else if (flag == "--repeats") {
      o.repeats = std::max(1, std::atoi(value));
    } else if (flag == "--device") {
      o.device = std::atoi(value);
    } else if (flag == "--classes") {
      o.classes.clear();
      for (const char* p = value; *p;) {
        o.classes.push_back(int32_t(std::strtol(p, const_cast<char**>(&p), 10)));
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr, "cuda_bench: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::string why;
  if (cuda::device_count(&why) == 0) {
    std::printf("SKIP: no CUDA device available (%s)\n", why.c_str());
    return 77;
  }
  const cuda::DeviceInfo info = cuda::device_info(o.device);
  std::printf("device %d: %s (sm_%d%d, %d SMs, %.1f GiB, %.1f GiB free)\n", o.device,
              info.name.c_str(), info.compute_major, info.compute_minor, info.multiprocessors,
              double(info.total_memory) / (1 << 30), double(info.free_memory) / (1 << 30));
  std::printf("peak DRAM bandwidth: %.0f GB/s from %s\n", info.peak_bandwidth_gbs,
              info.peak_source.c_str());

  // Pairs plus the largest matrix, with 1 GiB to spare for the context and allocator.
  const int32_t largest = *std::max_element(o.classes.begin(), o.classes.end());
  auto needed = [&](int64_t n) {
    return n * 8 + int64_t(largest) * largest * 8 + (int64_t(1) << 30);
  };
  if (!o.n_given && needed(o.n) > info.free_memory) {
    o.n /= 2;
    std::printf("NOTE: not enough free device memory for n = 1e9 (8 GB); using n = %lld\n",
                static_cast<long long>(o.n));
  }
  const double bytes = double(o.n) * 8.0;
  std::printf(
      "n = %lld pairs (%.2f GB read per pass), %.0f%% on the diagonal, %d timed passes after "
      "one warm-up\n",
      static_cast<long long>(o.n), bytes / 1e9, 100 * o.accuracy, o.repeats);

  cuda::DevicePairs pairs(o.device, o.n);
  bool all_correct = true;
  double worst_fraction = 1.0;
  for (int32_t classes : o.classes) {
    pairs.fill_random(classes, 0x5eed, o.accuracy);
    cuda::DeviceConfusion matrix(o.device, classes);
    matrix.add(pairs);  // warm-up: module load, first-touch
    matrix.synchronize();
    std::vector<double> seconds;
    for (int r = 0; r < o.repeats; ++r) {
      matrix.reset();
      matrix.synchronize();
      const auto start = std::chrono::steady_clock::now();
      matrix.add(pairs);
      matrix.synchronize();
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const std::vector<int64_t> counts = matrix.counts();
    const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t(0));
    const bool correct = total == o.n;
    all_correct = all_correct && correct;
    std::sort(seconds.begin(), seconds.end());
    const double best = seconds.front(), median = seconds[seconds.size() / 2];
    const double gbs = bytes / median / 1e9;
    const double fraction = info.peak_bandwidth_gbs > 0 ? gbs / info.peak_bandwidth_gbs : 0;
    worst_fraction = std::min(worst_fraction, fraction);
    std::printf(
        "C = %d (%s): median %.3f ms, best %.3f ms, %.0f GB/s = %.1f%% of peak%s; counts sum "
        "%s n\n",
        classes, matrix.uses_shared_memory() ? "shared-memory histograms" : "global atomics",
        median * 1e3, best * 1e3, gbs, 100 * fraction,
        info.peak_bandwidth_gbs > 0 ? "" : " (peak unknown)", correct ? "to" : "DIFFERS FROM");
  }
  std::printf("target (docs/TARGETS.md): >= 50%% of peak; lowest here %.1f%%: %s\n",
              100 * worst_fraction, worst_fraction >= 0.5 ? "met" : "NOT met");
  return all_correct ? 0 : 1;
}

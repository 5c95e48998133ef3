// NCCL communicators bootstrapped through a store, as real runs do: one rank in one
// process (any GPU machine), and two ranks on two devices in two threads (>= 2 GPUs).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda/cuda_backend.h"
#include "tests/cuda/gpu_test.h"

namespace shardlens::cuda {
namespace {

// An in-process stand-in for the c10d store: get blocks until the key is set.
class MemoryStore {
 public:
  BootstrapStore view() {
    BootstrapStore s;
    s.set = [this](const std::string& k, const std::vector<uint8_t>& v) {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_values[k] = v;
      m_changed.notify_all();
    };
    s.get = [this](const std::string& k) {
      std::unique_lock<std::mutex> lock(m_mutex);
      if (!m_changed.wait_for(lock, std::chrono::seconds(30), [&] { return m_values.count(k); }))
        throw std::runtime_error("store: timed out waiting for " + k);
      return m_values[k];
    };
    return s;
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::map<std::string, std::vector<uint8_t>> m_values;
};

TEST(Nccl, LoadsAndReportsAVersion) {
  // Needs no GPU: NCCL is dlopen'ed; "cannot load NCCL" here means it is not installed.
  const std::string v = nccl_version();
  EXPECT_EQ(v.rfind("2.", 0), 0u) << v;
}

TEST(Nccl, OneRankCollectives) {
  SHARDLENS_REQUIRE_GPUS(1);
  MemoryStore store;
  NcclComm comm(store.view(), "id", 0, 1, 0, 30);
  std::vector<int64_t> ints = {1, -2, int64_t(1) << 40};
  comm.all_reduce_sum(ints);
  EXPECT_EQ(ints, (std::vector<int64_t>{1, -2, int64_t(1) << 40}));
  std::vector<double> reals = {0.25, 3.5};
  comm.all_reduce_sum(reals);
  EXPECT_EQ(reals, (std::vector<double>{0.25, 3.5}));
  std::vector<float> floats = {0.5f, 16777216.0f};
  comm.all_reduce_sum(floats);
  EXPECT_EQ(floats, (std::vector<float>{0.5f, 16777216.0f}));
  std::vector<uint16_t> halves = {0x3c00, 0x6800};  // float16 1 and 2048
  comm.all_reduce_sum_16bit(halves, false);
  EXPECT_EQ(halves, (std::vector<uint16_t>{0x3c00, 0x6800}));
  EXPECT_EQ(comm.all_gather(std::vector<int64_t>{7, 8}), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(comm.all_gather(std::vector<double>{}), std::vector<double>{});

  DeviceConfusion matrix(0, 3);
  const std::vector<int32_t> t = {0, 1, 2, 2}, p = {0, 1, 1, 2};
  matrix.add(t.data(), p.data(), 4);
  comm.all_reduce_sum(matrix);
  EXPECT_EQ(matrix.counts(), (std::vector<int64_t>{1, 0, 0, 0, 1, 0, 0, 1, 1}));
}

TEST(Nccl, TwoRanksOnTwoDevices) {
  SHARDLENS_REQUIRE_GPUS(2);
  MemoryStore store;
  std::vector<std::string> errors(2);
  std::vector<std::vector<int64_t>> sums(2), gathers(2), matrices(2);
  std::vector<std::vector<double>> reals(2);
  std::vector<std::vector<float>> floats(2);
  std::vector<std::vector<uint16_t>> halves(2), brains(2);
  auto rank_main = [&](int rank) {
    try {
      NcclComm comm(store.view(), "id", rank, 2, rank, 60);
      sums[rank] = {rank + 1, 10 * (rank + 1)};
      comm.all_reduce_sum(sums[rank]);
      reals[rank] = {0.5 * rank, 1.0};
      comm.all_reduce_sum(reals[rank]);
      // Sums in the counter dtypes round on the device: float16 2048 + 1 stays 2048 (ties
      // to even), bfloat16 256 + 1 stays 256, float32 2^24 + 1 stays 2^24.
      floats[rank] =
          rank == 0 ? std::vector<float>{16777216.0f, 0.5f} : std::vector<float>{1.0f, 0.25f};
      comm.all_reduce_sum(floats[rank]);
      halves[rank] = rank == 0 ? std::vector<uint16_t>{0x6800, 0x3c00}   // 2048, 1
                               : std::vector<uint16_t>{0x3c00, 0x4000};  // 1, 2
      comm.all_reduce_sum_16bit(halves[rank], false);
      brains[rank] = rank == 0 ? std::vector<uint16_t>{0x4380, 0x3f80}   // 256, 1
                               : std::vector<uint16_t>{0x3f80, 0x3f80};  // 1, 1
      comm.all_reduce_sum_16bit(brains[rank], true);
      gathers[rank] = comm.all_gather(std::vector<int64_t>{rank, rank, rank});
      DeviceConfusion matrix(rank, 2);
      const std::vector<int32_t> t = {rank, 1}, p = {0, 1};
      matrix.add(t.data(), p.data(), 2);
      comm.all_reduce_sum(matrix);
      matrices[rank] = matrix.counts();
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
  };
  std::thread r0(rank_main, 0), r1(rank_main, 1);
  r0.join();
  r1.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(sums[r], (std::vector<int64_t>{3, 30}));
    EXPECT_EQ(reals[r], (std::vector<double>{0.5, 2.0}));
    EXPECT_EQ(floats[r], (std::vector<float>{16777216.0f, 0.75f}));
    EXPECT_EQ(halves[r], (std::vector<uint16_t>{0x6800, 0x4200}));  // 2048, 3
    EXPECT_EQ(brains[r], (std::vector<uint16_t>{0x4380, 0x4000}));  // 256, 2
    EXPECT_EQ(gathers[r], (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
    EXPECT_EQ(matrices[r], (std::vector<int64_t>{1, 0, 1, 2}));
  }
}

TEST(Nccl, AMissingPeerTimesOut) {
  SHARDLENS_REQUIRE_GPUS(1);
  // Rank 0 of 2 with no rank 1: init must end within the timeout, not hang.
  MemoryStore store;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(NcclComm(store.view(), "id", 0, 2, 0, 3), CudaError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace shardlens::cuda

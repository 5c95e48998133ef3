// The NCCL backend of a rank: collectives over cuda::NcclComm, batches counted by the CUDA
// kernel. Plain C++ (no LibTorch, no CUDA headers), so it compiles in seconds.
#include <algorithm>
#include <string>

#include "core/cuda/cuda_backend.h"
#include "core/torch/rank_backend.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

// The same "<step> failed: <why>" shape as the Gloo errors, so both read alike.
template <class F>
auto named(const char* what, F f) {
  try {
    return f();
  } catch (const cuda::CudaError& e) {
    throw cuda::CudaError(std::string(what) + " failed: " + e.what());
  }
}

class NcclCollectives : public RankCollectives {
 public:
  explicit NcclCollectives(std::unique_ptr<cuda::NcclComm> comm) : m_comm(std::move(comm)) {}

  std::vector<double> all_gather(const std::vector<double>& mine, const char* what) override {
    return named(what, [&] { return m_comm->all_gather(mine); });
  }
  std::vector<int64_t> all_gather(const std::vector<int64_t>& mine, const char* what) override {
    return named(what, [&] { return m_comm->all_gather(mine); });
  }
  void all_reduce_sum(std::vector<double>& values, const char* what) override {
    named(what, [&] {
      m_comm->all_reduce_sum(values);
      return 0;
    });
  }
  void all_reduce_sum(std::vector<int64_t>& values, const char* what) override {
    named(what, [&] {
      m_comm->all_reduce_sum(values);
      return 0;
    });
  }
  // NCCL sums every float dtype on the device, in its own order.
  bool all_reduce_sum(std::vector<double>& values, CounterDtype dtype, const char* what) override {
    if (dtype == CounterDtype::Float32) {
      std::vector<float> wire(values.begin(), values.end());
      named(what, [&] {
        m_comm->all_reduce_sum(wire);
        return 0;
      });
      std::copy(wire.begin(), wire.end(), values.begin());
      return true;
    }
    std::vector<uint16_t> wire(values.size());
    for (size_t k = 0; k < values.size(); ++k) wire[k] = to_bits16(values[k], dtype);
    named(what, [&] {
      m_comm->all_reduce_sum_16bit(wire, dtype == CounterDtype::BFloat16);
      return 0;
    });
    for (size_t k = 0; k < values.size(); ++k) values[k] = from_bits16(wire[k], dtype);
    return true;
  }

 private:
  std::unique_ptr<cuda::NcclComm> m_comm;
};

class CudaBatchCounter : public BatchCounter {
 public:
  CudaBatchCounter(int device, int32_t classes) : m_matrix(device, classes) {}

  // Per batch, not per rank: the counter dtype rounds after every batch (float16 counters
  // saturate), so each batch's exact counts come back and are added on the host as before.
  void count(const std::vector<int32_t>& targets, const std::vector<int32_t>& predictions,
             int32_t ignore_index, std::vector<double>& cells) override {
    m_matrix.reset();
    m_matrix.add(targets.data(), predictions.data(), int64_t(targets.size()), ignore_index);
    const std::vector<int64_t> counts = m_matrix.counts();
    for (size_t k = 0; k < cells.size(); ++k) cells[k] += double(counts[k]);
  }

 private:
  cuda::DeviceConfusion m_matrix;
};

}  // namespace

void require_cuda_device(int device) {
  std::string why;
  const int count = cuda::device_count(&why);
  if (count == 0) throw InputError("--backend nccl: no CUDA device available (" + why + ")");
  if (device < 0 || device >= count) {
    throw InputError("--backend nccl: LOCAL_RANK " + std::to_string(device) +
                     " has no CUDA device of its own (this machine has " + std::to_string(count) +
                     "; NCCL needs one device per rank)");
  }
}

RankBackend connect_nccl(const RankConnection& c) {
  // NCCL's unique id travels through the run's own store, under its own prefix.
  const std::shared_ptr<RankStore> store = c.store->prefixed("nccl");
  cuda::BootstrapStore bootstrap;
  bootstrap.set = [store](const std::string& k, const std::vector<uint8_t>& v) {
    store->set(k, v);
  };
  bootstrap.get = [store](const std::string& k) { return store->get(k); };
  RankBackend r;
  r.counter = std::make_unique<CudaBatchCounter>(c.local_rank, c.classes);
  r.collectives = std::make_unique<NcclCollectives>(std::make_unique<cuda::NcclComm>(
      bootstrap, "id", c.rank, c.world, c.local_rank, c.timeout_s));
  return r;
}

}  // namespace shardlens

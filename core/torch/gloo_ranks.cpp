// The Gloo backend of a rank: collectives over c10d::ProcessGroupGloo through CPU tensors.
// The LibTorch translation unit with ATen and ProcessGroupGloo (nccl_ranks.cpp is its CUDA
// counterpart).
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <algorithm>
#include <string>

#include "core/torch/c10d_store.h"
#include "core/torch/rank_backend.h"

namespace shardlens {

namespace {

at::ScalarType scalar_type_of(CounterDtype dtype) {
  switch (dtype) {
    case CounterDtype::Float16:
      return at::kHalf;
    case CounterDtype::BFloat16:
      return at::kBFloat16;
    case CounterDtype::Float32:
      return at::kFloat;
    case CounterDtype::Int64:
      break;
  }
  return at::kLong;
}

void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    throw RunFailure(std::string(what) + " failed: " + first_line(e.what()));
  }
}

class GlooCollectives : public RankCollectives {
 public:
  GlooCollectives(std::unique_ptr<c10d::ProcessGroupGloo> pg, int world)
      : m_pg(std::move(pg)), m_world(world) {}

  std::vector<double> all_gather(const std::vector<double>& mine, const char* what) override {
    return gather(mine, at::kDouble, what);
  }
  std::vector<int64_t> all_gather(const std::vector<int64_t>& mine, const char* what) override {
    return gather(mine, at::kLong, what);
  }
  void all_reduce_sum(std::vector<double>& values, const char* what) override {
    reduce(values, at::kDouble, what);
  }
  void all_reduce_sum(std::vector<int64_t>& values, const char* what) override {
    reduce(values, at::kLong, what);
  }
  bool all_reduce_sum(std::vector<double>& values, CounterDtype dtype, const char* what) override {
    std::vector<at::Tensor> t = {tensor_of(values, at::kDouble).to(scalar_type_of(dtype))};
    try {
      m_pg->allreduce(t)->wait();
    } catch (const std::exception& e) {
      // Gloo checks the type on every rank alike before sending anything, so every rank
      // takes this way out together and the group stays usable.
      if (std::string(e.what()).find("Invalid scalar type") != std::string::npos) return false;
      throw RunFailure(std::string(what) + " failed: " + first_line(e.what()));
    }
    const at::Tensor back = t[0].to(at::kDouble).contiguous();
    std::copy(back.data_ptr<double>(), back.data_ptr<double>() + values.size(), values.begin());
    return true;
  }

 private:
  template <class T>
  static at::Tensor tensor_of(const std::vector<T>& v, at::ScalarType type) {
    return at::from_blob(const_cast<T*>(v.data()), {int64_t(v.size())}, type).clone();
  }

  template <class T>
  std::vector<T> gather(const std::vector<T>& mine, at::ScalarType type, const char* what) {
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < m_world; ++r) out[0].push_back(at::zeros({int64_t(mine.size())}, type));
    std::vector<at::Tensor> in = {tensor_of(mine, type)};
    wait(m_pg->allgather(out, in), what);
    std::vector<T> all;
    all.reserve(mine.size() * size_t(m_world));
    for (const at::Tensor& t : out[0]) {
      const T* p = t.contiguous().data_ptr<T>();
      all.insert(all.end(), p, p + mine.size());
    }
    return all;
  }

  template <class T>
  void reduce(std::vector<T>& values, at::ScalarType type, const char* what) {
    std::vector<at::Tensor> t = {tensor_of(values, type)};
    wait(m_pg->allreduce(t), what);
    const T* p = t[0].contiguous().data_ptr<T>();
    std::copy(p, p + values.size(), values.begin());
  }

  std::unique_ptr<c10d::ProcessGroupGloo> m_pg;
  int m_world;
};

std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& bind_address) {
  // Never createDefaultDevice(): it resolves the host name, which inside a network namespace
  // or a container often names an address the host does not have, and then falls back on
  // loopback, so peers on other hosts would be told 127.0.0.1.
  return c10d::ProcessGroupGloo::createDeviceForHostname(bind_address);
}

}  // namespace

RankBackend connect_gloo(const RankConnection& c) {
  const std::shared_ptr<RankStore> view = c.store->prefixed("gloo");
  const auto* store = dynamic_cast<const C10dStore*>(view.get());
  if (!store) throw std::logic_error("the Gloo backend needs a c10d store");
  auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(c.timeout_s));
  options->devices.push_back(gloo_device(c.bind_address));
  RankBackend backend;  // the batch counter: none, the rank counts on the CPU
  try {
    backend.collectives = std::make_unique<GlooCollectives>(
        std::make_unique<c10d::ProcessGroupGloo>(store->c10d(), c.rank, c.world, options), c.world);
  } catch (const std::exception& e) {
    throw RunFailure("cannot connect to the other ranks: " + first_line(e.what()));
  }
  return backend;
}

}  // namespace shardlens

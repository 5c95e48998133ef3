#pragma once
// The run's store (core/realrun/rank_protocol.h) over a c10d store: FileStore, TCPStore and
// their PrefixStore views. Includes c10d headers, so only core/torch's LibTorch translation
// units (torch_ranks.cpp, gloo_ranks.cpp) include it.
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "core/realrun/rank_protocol.h"

namespace shardlens {

class C10dStore : public RankStore {
 public:
  explicit C10dStore(c10::intrusive_ptr<c10d::Store> store) : m_store(std::move(store)) {}

  void set(const std::string& key, const Bytes& value) override { m_store->set(key, value); }
  Bytes get(const std::string& key) override { return m_store->get(key); }
  bool check(const std::string& key) override { return m_store->check({key}); }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    m_store->wait(keys, timeout);
  }
  std::shared_ptr<RankStore> prefixed(const std::string& prefix) override {
    return std::make_shared<C10dStore>(c10::make_intrusive<c10d::PrefixStore>(prefix, m_store));
  }

  // What ProcessGroupGloo connects through.
  const c10::intrusive_ptr<c10d::Store>& c10d() const { return m_store; }

 private:
  c10::intrusive_ptr<c10d::Store> m_store;
};

}  // namespace shardlens

#pragma once
// core/runs/socket_store.h as a c10d::Store, so ProcessGroupGloo rendezvous over a store
// that listens on one address only. The server, when this process hosts it, lives as long
// as the store. Included by torch_ranks.cpp only.
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <memory>

#include "core/runs/socket_store.h"

namespace shardlens {

class SocketC10dStore : public c10d::Store {
 public:
  SocketC10dStore(std::shared_ptr<SocketStoreServer> server,
                  std::unique_ptr<SocketStoreClient> client)
      : m_server(std::move(server)), m_client(std::move(client)) {
    timeout_ = m_client->timeout();
  }

  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    m_client->set(key, value);
  }
  std::vector<uint8_t> compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                  const std::vector<uint8_t>& desired) override {
    return m_client->compare_set(key, expected, desired);
  }
  std::vector<uint8_t> get(const std::string& key) override { return m_client->get(key); }
  int64_t add(const std::string& key, int64_t value) override { return m_client->add(key, value); }
  bool deleteKey(const std::string& key) override { return m_client->remove(key); }
  bool check(const std::vector<std::string>& keys) override { return m_client->check(keys); }
  int64_t getNumKeys() override { return m_client->num_keys(); }
  void wait(const std::vector<std::string>& keys) override { m_client->wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    m_client->wait(keys, timeout);
  }
  void setTimeout(const std::chrono::milliseconds& timeout) override {
    c10d::Store::setTimeout(timeout);
    m_client->set_timeout(timeout);
  }

 private:
  std::shared_ptr<SocketStoreServer> m_server;  // declared first: outlives the client
  std::unique_ptr<SocketStoreClient> m_client;
};

}  // namespace shardlens

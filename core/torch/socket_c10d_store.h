#pragma once
// core/platform/socket_store.h as a c10d::Store, so ProcessGroupGloo rendezvous over a store
// that listens on one address only. The server, when this process hosts it, lives as long
// as the store. Included by torch_ranks.cpp only.
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <memory>
#include <string>

#include "core/platform/socket_store.h"

namespace shardlens {

class SocketC10dStore : public c10d::Store {
 public:
  // Connects to the store at address:port; `server`, when this process hosts it, is kept
  // alive as long as this store or any clone of it.
  // `secret`: the run's, or empty with `find_secret` to look for the one the store's host
  // left (SocketStoreClient). `keep` lives as long as the server (the secret's file).
  SocketC10dStore(std::shared_ptr<SocketStoreServer> server, const std::string& address, int port,
                  std::chrono::milliseconds timeout, const StoreSecret& secret,
                  SocketStoreClient::FindSecret find_secret = {}, std::shared_ptr<void> keep = {})
      : m_server(std::move(server)),
        m_keep(std::move(keep)),
        m_address(address),
        m_port(port),
        m_secret(secret),
        m_find_secret(std::move(find_secret)),
        m_client(
            std::make_unique<SocketStoreClient>(address, port, timeout, secret, m_find_secret)) {
    timeout_ = timeout;
  }

  // LibTorch >= 2.6 asks every store for clone() (a pure virtual there; absent in 1.13, so
  // no `override`): another connection to the same store, for another thread.
  virtual c10::intrusive_ptr<c10d::Store> clone() {
    return c10::make_intrusive<SocketC10dStore>(m_server, m_address, m_port, timeout_, m_secret,
                                                m_find_secret, m_keep);
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
  std::shared_ptr<void> m_keep;
  std::string m_address;
  int m_port;
  StoreSecret m_secret;
  SocketStoreClient::FindSecret m_find_secret;
  std::unique_ptr<SocketStoreClient> m_client;
};

}  // namespace shardlens

#pragma once
// The key-value store of a run across machines: a server that listens on exactly one
// address, and its client. LibTorch 1.13's TCPStore server binds every interface whatever
// address it is given, so a rank hosting it would listen where the user never asked; this
// one binds the address it is given and nothing else. c10d's store semantics (set, blocking
// get and wait with a timeout, add, compare-and-set) so that ProcessGroupGloo and NCCL's id
// exchange run over it unchanged (core/torch/socket_c10d_store.h adapts it). No LibTorch.
//
// Wire format, both directions: a frame is uint8 op (or status), uint32 item count, then per
// item uint64 length and its bytes, all little-endian. Nothing is authenticated, as with
// c10d's TCPStore: it is meant for the cluster's own network.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/platform/store.h"

namespace shardlens {

class SocketStoreServer {
 public:
  // Listens on `address` (a numeric IPv4/IPv6 address or a host name resolving to an address
  // of this host) and `port` (0: any free one). Throws RunFailure naming the address when it
  // cannot (e.g. the address is not one of this host's).
  SocketStoreServer(const std::string& address, int port);
  ~SocketStoreServer();
  SocketStoreServer(const SocketStoreServer&) = delete;
  SocketStoreServer& operator=(const SocketStoreServer&) = delete;

  int port() const;
  // The numeric address it listens on.
  const std::string& address() const;

  struct State;

 private:
  std::unique_ptr<State> m_state;
};

class SocketStoreClient {
 public:
  // Connects to address:port, retrying until `timeout` passes (the server may start later
  // than its clients). `timeout` is also the default wait of get(). Throws RunFailure.
  SocketStoreClient(const std::string& address, int port, std::chrono::milliseconds timeout);
  ~SocketStoreClient();
  SocketStoreClient(const SocketStoreClient&) = delete;
  SocketStoreClient& operator=(const SocketStoreClient&) = delete;

  void set(const std::string& key, const Bytes& value);
  // Waits up to timeout() for the key.
  Bytes get(const std::string& key);
  // Adds `delta` to the key's integer value (decimal text, as c10d keeps it; absent: 0).
  int64_t add(const std::string& key, int64_t delta);
  // Sets `desired` when the key's value is `expected` (or the key is absent and `expected`
  // is empty); returns the value the key has afterwards.
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired);
  bool remove(const std::string& key);
  bool check(const std::vector<std::string>& keys);
  int64_t num_keys();
  // Throws RunFailure "timed out ..." when `timeout` passes before every key exists.
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);

  std::chrono::milliseconds timeout() const { return m_timeout; }
  void set_timeout(std::chrono::milliseconds timeout) { m_timeout = timeout; }

 private:
  std::vector<Bytes> call(uint8_t op, const std::vector<Bytes>& items);

  std::string m_where;  // address:port, for messages
  int m_fd = -1;
  std::chrono::milliseconds m_timeout;
  std::mutex m_mutex;  // one request at a time on the connection
};

}  // namespace shardlens

#pragma once
// The key-value store of a run across machines: a server that listens on exactly one
// address, and its client. LibTorch 1.13's TCPStore server binds every interface whatever
// address it is given, so a rank hosting it would listen where the user never asked; this
// one binds the address it is given and nothing else. c10d's store semantics (set, blocking
// get and wait with a timeout, add, compare-and-set) so that ProcessGroupGloo and NCCL's id
// exchange run over it unchanged (core/torch/socket_c10d_store.h adapts it). No LibTorch.
//
// Wire format, both directions: a frame is uint8 op (or status), uint32 item count, then per
// item uint64 length and its bytes, all little-endian. With a secret (core/platform/
// store_auth.h) the server greets each connection with a frame (status 3) holding a nonce,
// and every frame after it, both ways, is followed by its 32-byte HMAC-SHA256 tag under the
// connection's key: a process without the secret can neither read nor write the store.
// c10d's TCPStore authenticates nothing.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/platform/store.h"
#include "core/platform/store_auth.h"

namespace shardlens {

class SocketStoreServer {
 public:
  // Listens on `address` (a numeric IPv4/IPv6 address or a host name resolving to an address
  // of this host) and `port` (0: any free one). Throws RunFailure naming the address when it
  // cannot (e.g. the address is not one of this host's). A client that sends a value over
  // limits.value_bytes (refused on its length, before its bytes arrive) or would take the
  // store past limits.total_bytes (keys and values held, and requests not yet whole) is told
  // why and disconnected, the reason logged on stderr; the others are served as before.
  // With `secret`, only clients holding it are served. Every connection must send a whole
  // request within 10 s, at most 64 may be waiting to, and each may have one request
  // pending: the others are closed, the reason logged.
  SocketStoreServer(const std::string& address, int port, const StoreLimits& limits = {},
                    const StoreSecret& secret = {});
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

// How long past a request's own wait (get, wait) or past timeout() (anything else) a client
// waits for the store's reply before it gives the store up.
inline constexpr std::chrono::milliseconds kStoreReplyMargin{2000};

class SocketStoreClient {
 public:
  // Connects to address:port, retrying until `timeout` passes (the server may start later
  // than its clients), and asks the store one request it answers at once, all within
  // `timeout`: a listener that never accepts or never answers is given up on then, with a
  // RunFailure naming address:port and the timeout. `timeout` is also the default wait of
  // get(). A request whose reply does not come in time ends the connection: later requests
  // throw at once.
  // With `secret`, the store must authenticate with the same one (and without, must not).
  // Without one, `find_secret` (when given) is asked once the connection is made, when the
  // store greets with a nonce: the secret its host left for this host's ranks.
  using FindSecret = std::function<std::optional<StoreSecret>()>;
  SocketStoreClient(const std::string& address, int port, std::chrono::milliseconds timeout,
                    const StoreSecret& secret = {}, const FindSecret& find_secret = {});
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
  // One request and its reply on the connection, by `deadline`.
  std::vector<Bytes> exchange(uint8_t op, const std::vector<Bytes>& items,
                              std::chrono::steady_clock::time_point deadline);
  // The next frame from the store (its tag checked when `tagged`), by `deadline`.
  std::vector<Bytes> read_frame(uint8_t& status, std::chrono::steady_clock::time_point deadline,
                                bool tagged);

  std::string m_where;   // address:port, for messages
  StoreSecret m_secret;  // empty: unauthenticated
  std::optional<FrameSigner> m_signer;
  Bytes m_in;            // bytes received past the last frame read
  int m_fd = -1;         // non-blocking; -1 once the connection is given up
  std::string m_broken;  // why it was given up
  std::chrono::milliseconds m_timeout;
  std::mutex m_mutex;  // one request at a time on the connection
};

}  // namespace shardlens

#include "core/platform/socket_store.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <optional>
#include <thread>

#include "core/platform/store_auth.h"
#include "core/vocabulary/limits.h"

namespace shardlens {

namespace {

using Clock = std::chrono::steady_clock;

enum Op : uint8_t {
  kSet = 1,
  kGet = 2,  // key, timeout_ms
  kAdd = 3,  // key, delta (decimal text)
  kCompareSet = 4,
  kDelete = 5,
  kCheck = 6,    // keys...
  kNumKeys = 7,  //
  kWait = 8,     // timeout_ms, keys...
};
// kHello: the first frame of a store that authenticates, carrying the connection's nonce.
enum Status : uint8_t { kOk = 0, kTimedOut = 1, kError = 2, kHello = 3 };

// How long a refused client may go on sending (discarded) before it is closed on.
constexpr std::chrono::milliseconds kRefusedDrain{2000};
// A connection must send its first whole (and, with a secret, signed) request within this:
// every client of ours does at once. Idle connections took a rank's 256 descriptors.
constexpr std::chrono::milliseconds kFirstRequestWithin{10000};
// What a connection may send before its first whole (signed) request: the run's clients
// start with a request of a few bytes, so a peer without the secret cannot hold the store's
// memory with a large request that will never verify.
constexpr size_t kMaxFirstRequestBytes = 64 * 1024;
// Connections that have not yet sent one: beyond these, new ones are closed at once (the
// run's own clients pass through this state in a millisecond).
constexpr size_t kMaxNewConnections = 64;

Bytes bytes_of(const std::string& s) {
  return Bytes(s.begin(), s.end());
}
std::string text_of(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

Bytes encode_u64(uint64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[size_t(i)] = uint8_t(v >> (8 * i));
  return b;
}
uint64_t decode_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

Bytes encode_frame(uint8_t op, const std::vector<Bytes>& items) {
  size_t size = 5;
  for (const Bytes& b : items) size += 8 + b.size();
  Bytes out;
  out.reserve(size);
  out.push_back(op);
  const uint32_t n = uint32_t(items.size());
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(n >> (8 * i)));
  for (const Bytes& b : items) {
    const Bytes len = encode_u64(b.size());
    out.insert(out.end(), len.begin(), len.end());
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

struct TooLarge : std::runtime_error {
  explicit TooLarge(uint64_t len)
      : std::runtime_error("a value of " + std::to_string(len) + " bytes"), length(len) {}
  uint64_t length;
};

// Parses one whole frame from the front of `buf`. Returns the bytes it takes, or 0 when the
// frame is not complete yet; throws std::runtime_error on a frame no peer of ours sends, or
// one with an item over `max_item` bytes, as soon as its length is read (before its bytes
// arrive).
size_t parse_frame(const Bytes& buf, uint8_t& op, std::vector<Bytes>& items,
                   uint64_t max_item = kMaxStoreValueBytes) {
  if (buf.size() < 5) return 0;
  op = buf[0];
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= uint32_t(buf[size_t(1 + i)]) << (8 * i);
  if (n > kMaxStoreFrameItems)
    throw std::runtime_error("a frame of " + std::to_string(n) + " items");
  size_t at = 5;
  items.clear();
  for (uint32_t i = 0; i < n; ++i) {
    if (buf.size() < at + 8) return 0;
    const uint64_t len = decode_u64(buf.data() + at);
    if (len > max_item) throw TooLarge(len);
    at += 8;
    if (buf.size() - at < len) return 0;
    items.emplace_back(buf.begin() + long(at), buf.begin() + long(at + len));
    at += size_t(len);
  }
  return at;
}

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

std::string numeric_host(const sockaddr* sa, socklen_t len) {
  char host[NI_MAXHOST] = {};
  if (getnameinfo(sa, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "?";
  return host;
}

std::string numeric_endpoint(const sockaddr* sa, socklen_t len) {
  char host[NI_MAXHOST] = {}, serv[NI_MAXSERV] = {};
  if (getnameinfo(sa, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) !=
      0)
    return "?";
  return std::string(host) + ":" + serv;
}

// addrinfo of host:port for TCP; throws RunFailure naming the host when it does not resolve.
void resolve(const std::string& host, int port, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &out.list);
  if (rc != 0 || !out.list)
    throw RunFailure("cannot resolve the store address '" + host + "': " + gai_strerror(rc));
}

uint64_t millis(std::chrono::milliseconds d) {
  return uint64_t(std::max<int64_t>(0, d.count()));
}

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

}  // namespace

// --- server ----------------------------------------------------------------------------------

struct SocketStoreServer::State {
  struct Waiter {
    int fd;
    uint8_t op;  // kGet (answers the value) or kWait (answers nothing)
    std::vector<std::string> keys;
    Clock::time_point deadline;
  };

  struct Client {
    Bytes buf;         // bytes received, not yet a whole frame
    std::string peer;  // address:port, for the log
    // A reply not yet sent whole. Sends never block the store's one thread: a client that
    // does not read its replies would otherwise stall every rank. While a reply is unsent
    // its client's requests are not read, so each client has at most one reply pending.
    Bytes out;
    size_t out_at = 0;
    bool hung_up = false;  // its replies would exceed the bound: its poll() end drops it
    bool known = false;    // has sent a whole (signed) request
    Clock::time_point first_request_by;
    std::optional<FrameSigner> signer;  // with a secret: this connection's keys
  };

  int listen_fd = -1;
  int wake[2] = {-1, -1};
  int port = 0;
  std::string address;
  StoreLimits limits;
  StoreSecret secret;  // empty: frames are not authenticated
  std::map<std::string, Bytes> data;
  uint64_t stored_bytes = 0;   // keys and values in `data`
  uint64_t pending_bytes = 0;  // every client's `buf`
  uint64_t unsent_bytes = 0;   // every client's `out`: bounded by limits.total_bytes too
  uint64_t waiting_bytes = 0;  // the keys waiters wait for: bounded with the rest
  std::map<int, Client> clients;
  // Refused clients: told why and shut down for writing; what they still send is read and
  // thrown away (so they can read the reason instead of a reset) until they close or
  // kRefusedDrain passes.
  std::map<int, Clock::time_point> refused;
  std::list<Waiter> waiters;
  std::thread thread;

  ~State() {
    for (auto& [fd, _] : clients) ::close(fd);
    for (auto& [fd, _] : refused) ::close(fd);
    for (int fd : {listen_fd, wake[0], wake[1]})
      if (fd >= 0) ::close(fd);
  }

  bool has_all(const std::vector<std::string>& keys) const {
    return std::all_of(keys.begin(), keys.end(), [&](const auto& k) { return data.count(k); });
  }

  // The frame, followed by its tag when the connection is authenticated.
  static Bytes signed_frame(Client& c, uint8_t status, const std::vector<Bytes>& items) {
    Bytes frame = encode_frame(status, items);
    if (c.signer) {
      const auto tag = c.signer->sign(false, frame.data(), frame.size());
      frame.insert(frame.end(), tag.begin(), tag.end());
    }
    return frame;
  }

  static uint64_t key_bytes(const std::vector<std::string>& keys) {
    uint64_t n = 0;
    for (const std::string& k : keys) n += sizeof(std::string) + k.size();
    return n;
  }

  void add_waiter(int fd, uint8_t op, std::vector<std::string> keys, Clock::time_point until) {
    waiting_bytes += key_bytes(keys);
    waiters.push_back({fd, op, std::move(keys), until});
  }

  void remove_waiters(int fd) {
    waiters.remove_if([&](const Waiter& w) {
      if (w.fd != fd) return false;
      waiting_bytes -= key_bytes(w.keys);
      return true;
    });
  }

  bool is_waiting(int fd) const {
    return std::any_of(waiters.begin(), waiters.end(),
                       [fd](const Waiter& w) { return w.fd == fd; });
  }

  // Queues the reply and sends what the socket takes now; the rest goes out as poll() says
  // the client can take it (flush).
  void reply(int fd, uint8_t status, const std::vector<Bytes>& items) {
    const auto it = clients.find(fd);
    if (it == clients.end() || it->second.hung_up) return;
    Client& c = it->second;
    Bytes frame = signed_frame(c, status, items);
    if (unsent_bytes + frame.size() > limits.total_bytes) {
      // Clients that leave replies unread (each may ask for the largest value) would hold
      // copies of the store past its bound: this one is hung up on.
      std::fprintf(stderr,
                   "shardlens: the store on %s:%d dropped the client %s: its reply of %zu bytes "
                   "would take the replies not yet read past %llu bytes\n",
                   address.c_str(), port, c.peer.c_str(), frame.size(),
                   static_cast<unsigned long long>(limits.total_bytes));
      unsent_bytes -= c.out.size() - c.out_at;
      c.out.clear();
      c.out_at = 0;
      c.hung_up = true;
      ::shutdown(fd, SHUT_RDWR);  // its next poll() reports the hang-up: dropped there
      return;
    }
    unsent_bytes -= c.out.size() - c.out_at;
    if (c.out_at == c.out.size()) {
      c.out = std::move(frame);
    } else {
      c.out.insert(c.out.end(), frame.begin(), frame.end());
    }
    unsent_bytes += c.out.size() - c.out_at;
    flush(fd);
  }

  // Sends what the socket takes of the client's unsent reply, without waiting. False when
  // the client is gone.
  bool flush(int fd) {
    Client& c = clients[fd];
    while (c.out_at < c.out.size()) {
      const ssize_t k =
          ::send(fd, c.out.data() + c.out_at, c.out.size() - c.out_at, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (k <= 0) return false;
      c.out_at += size_t(k);
      unsent_bytes -= uint64_t(k);
    }
    c.out.clear();
    c.out_at = 0;
    return true;
  }

  bool has_unsent(int fd) const {
    const auto it = clients.find(fd);
    return it != clients.end() && it->second.out_at < it->second.out.size();
  }

  void serve_waiters() {
    const auto now = Clock::now();
    for (auto it = waiters.begin(); it != waiters.end();) {
      if (has_all(it->keys)) {
        reply(it->fd, kOk,
              it->op == kGet ? std::vector<Bytes>{data[it->keys[0]]} : std::vector<Bytes>{});
      } else if (now >= it->deadline) {
        reply(it->fd, kTimedOut, {});
      } else {
        ++it;
        continue;
      }
      waiting_bytes -= key_bytes(it->keys);
      it = waiters.erase(it);
    }
  }

  // Stores key = value unless the store would then hold more than its limit; the reason
  // when it does not.
  std::optional<std::string> store(const std::string& key, Bytes value) {
    auto it = data.find(key);
    const uint64_t old = it == data.end() ? 0 : key.size() + it->second.size();
    const uint64_t now = key.size() + value.size();
    if (stored_bytes - old + now > limits.total_bytes) {
      return "the store holds " + std::to_string(stored_bytes) + " bytes; '" + key + "' (" +
             std::to_string(value.size()) + " bytes) would take it past its limit of " +
             std::to_string(limits.total_bytes) + " bytes";
    }
    stored_bytes = stored_bytes - old + now;
    if (it == data.end())
      data.emplace(key, std::move(value));
    else
      it->second = std::move(value);
    return std::nullopt;
  }

  void handle(int fd, uint8_t op, std::vector<Bytes>& items) {
    auto need = [&](size_t n) {
      if (items.size() < n) throw std::runtime_error("a request with too few items");
    };
    switch (op) {
      case kSet: {
        need(2);
        if (auto refused = store(text_of(items[0]), std::move(items[1])))
          return reply(fd, kError, {bytes_of(*refused)});
        return reply(fd, kOk, {});
      }
      case kGet: {
        need(2);
        const std::string key = text_of(items[0]);
        const auto wait = std::chrono::milliseconds(
            items[1].size() == 8 ? int64_t(decode_u64(items[1].data()) & INT64_MAX) : 0);
        if (auto it = data.find(key); it != data.end()) return reply(fd, kOk, {it->second});
        add_waiter(fd, kGet, {key}, Clock::now() + wait);
        return;
      }
      case kAdd: {
        need(2);
        const std::string key = text_of(items[0]);
        int64_t value = 0;
        try {
          if (auto it = data.find(key); it != data.end()) value = std::stoll(text_of(it->second));
          value += std::stoll(text_of(items[1]));
        } catch (const std::exception&) {
          return reply(fd, kError, {bytes_of("the value of '" + key + "' is not an integer")});
        }
        if (auto refused = store(key, bytes_of(std::to_string(value))))
          return reply(fd, kError, {bytes_of(*refused)});
        return reply(fd, kOk, {bytes_of(std::to_string(value))});
      }
      case kCompareSet: {
        need(3);
        const std::string key = text_of(items[0]);
        auto it = data.find(key);
        if (it == data.end() ? items[1].empty() : it->second == items[1]) {
          if (auto refused = store(key, items[2])) return reply(fd, kError, {bytes_of(*refused)});
          return reply(fd, kOk, {items[2]});
        }
        return reply(fd, kOk, {it == data.end() ? items[1] : it->second});
      }
      case kDelete: {
        need(1);
        auto it = data.find(text_of(items[0]));
        if (it == data.end()) return reply(fd, kOk, {bytes_of("0")});
        stored_bytes -= it->first.size() + it->second.size();
        data.erase(it);
        return reply(fd, kOk, {bytes_of("1")});
      }
      case kCheck: {
        std::vector<std::string> keys;
        for (const Bytes& b : items) keys.push_back(text_of(b));
        return reply(fd, kOk, {bytes_of(has_all(keys) ? "1" : "0")});
      }
      case kNumKeys:
        return reply(fd, kOk, {bytes_of(std::to_string(data.size()))});
      case kWait: {
        need(1);
        const auto wait = std::chrono::milliseconds(
            items[0].size() == 8 ? int64_t(decode_u64(items[0].data()) & INT64_MAX) : 0);
        std::vector<std::string> keys;
        for (size_t i = 1; i < items.size(); ++i) keys.push_back(text_of(items[i]));
        if (has_all(keys)) return reply(fd, kOk, {});
        if (stored_bytes + pending_bytes + waiting_bytes + key_bytes(keys) > limits.total_bytes)
          throw std::runtime_error("a wait for " + std::to_string(keys.size()) +
                                   " keys would take the store past its limit of " +
                                   std::to_string(limits.total_bytes) + " bytes");
        add_waiter(fd, kWait, std::move(keys), Clock::now() + wait);
        return;
      }
      default:
        throw std::runtime_error("an unknown request " + std::to_string(op));
    }
  }

  void forget(std::map<int, Client>::iterator it) {
    pending_bytes -= it->second.buf.size();
    unsent_bytes -= it->second.out.size() - it->second.out_at;
    clients.erase(it);
  }

  void drop(int fd) {
    remove_waiters(fd);
    if (auto it = clients.find(fd); it != clients.end()) forget(it);
    ::close(fd);
  }

  // Hangs up on a client that sent what none of our clients sends (garbage, a value over the
  // limits): says why, to it and on stderr, so the store's host sees who was refused.
  void refuse(int fd, const std::string& why) {
    const auto it = clients.find(fd);
    const std::string peer = it == clients.end() ? "?" : it->second.peer;
    std::fprintf(stderr, "shardlens: the store on %s:%d refused the client %s: %s\n",
                 address.c_str(), port, peer.c_str(), why.c_str());
    // The reason, as far as the socket takes it now (a few bytes: all of it, unless the
    // client left an earlier reply unread).
    if (it != clients.end() && !has_unsent(fd)) {
      const Bytes frame = signed_frame(it->second, kError, {bytes_of("refused: " + why)});
      [[maybe_unused]] const ssize_t k =
          ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    ::shutdown(fd, SHUT_WR);
    remove_waiters(fd);
    if (it != clients.end()) forget(it);
    refused[fd] = Clock::now() + kRefusedDrain;
  }

  // Reads and discards what a refused client still sends; false once it is done with.
  bool drain(int fd) {
    uint8_t chunk[65536];
    const ssize_t k = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    return k > 0 || (k < 0 && (errno == EINTR || errno == EAGAIN));
  }

  // Reads what the client sent; handles each whole request. False: the client is gone (or
  // refused).
  bool receive(int fd) {
    uint8_t chunk[65536];
    const ssize_t k = ::recv(fd, chunk, sizeof chunk, 0);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (k <= 0) return false;
    Client& client = clients[fd];
    Bytes& buf = client.buf;
    if (stored_bytes + pending_bytes + uint64_t(k) > limits.total_bytes) {
      refuse(fd, "its requests would take the store past its limit of " +
                     std::to_string(limits.total_bytes) + " bytes (it holds " +
                     std::to_string(stored_bytes) + ")");
      return true;  // now in `refused`
    }
    if (!client.known && buf.size() + size_t(k) > kMaxFirstRequestBytes) {
      refuse(fd, "more than " + std::to_string(kMaxFirstRequestBytes) +
                     " bytes before its first whole request");
      return true;  // now in `refused`
    }
    buf.insert(buf.end(), chunk, chunk + k);
    pending_bytes += uint64_t(k);
    try {
      uint8_t op = 0;
      std::vector<Bytes> items;
      const uint64_t room = limits.total_bytes - std::min(limits.total_bytes, stored_bytes);
      while (size_t used = parse_frame(buf, op, items, std::min(limits.value_bytes, room))) {
        if (client.signer) {
          if (buf.size() < used + kStoreTagBytes) break;  // its tag is still on its way
          if (!client.signer->verify(true, buf.data(), used, buf.data() + used)) {
            refuse(fd,
                   "a request not signed with the run's secret (not one of the run's "
                   "processes, or one started with another " +
                       std::string(kStoreSecretVariable) + ")");
            return true;
          }
          used += kStoreTagBytes;
        }
        buf.erase(buf.begin(), buf.begin() + long(used));
        pending_bytes -= used;
        // Our clients ask one thing at a time: a request while a wait is pending is not theirs
        // (each would hold another waiter: 340,000-key waits grew a rank by a gigabyte).
        if (is_waiting(fd)) {
          refuse(fd, "a request sent before its previous one was answered");
          return true;
        }
        client.known = true;
        handle(fd, op, items);
        if (client.hung_up) return false;  // dropped by the caller
      }
    } catch (const TooLarge& e) {
      refuse(fd, e.length > limits.value_bytes
                     ? "a value of " + std::to_string(e.length) + " bytes, over the limit of " +
                           std::to_string(limits.value_bytes) + " bytes a value"
                     : "a value of " + std::to_string(e.length) +
                           " bytes would take the store past its limit of " +
                           std::to_string(limits.total_bytes) + " bytes (it holds " +
                           std::to_string(stored_bytes) + ")");
    } catch (const std::exception& e) {
      refuse(fd, e.what());  // not one of our clients: hang up on it
    }
    return true;
  }

  void loop() {
    for (;;) {
      std::vector<pollfd> fds = {{wake[0], POLLIN, 0}, {listen_fd, POLLIN, 0}};
      // A client with a reply unsent is written to, not read from (Client::out).
      for (const auto& [fd, c] : clients)
        fds.push_back({fd, short(c.out_at < c.out.size() ? POLLOUT : POLLIN), 0});
      const size_t first_refused = fds.size();
      for (const auto& [fd, _] : refused) fds.push_back({fd, POLLIN, 0});
      // poll() wakes at the nearest deadline: a refused client's drain, a wait, a first request.
      int wait_ms = -1;
      const auto now = Clock::now();
      const auto until = [&](Clock::time_point deadline) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        const int ms = int(std::clamp<int64_t>(left + 1, 0, 60000));
        wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
      };
      for (const auto& [_, drained_by] : refused) until(drained_by);
      for (const Waiter& w : waiters) until(w.deadline);
      for (const auto& [_, c] : clients)
        if (!c.known) until(c.first_request_by);
      if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) return;
      if (fds[0].revents) return;  // the destructor asks to stop
      if (fds[1].revents & POLLIN) {
        sockaddr_storage peer{};
        socklen_t peer_len = sizeof peer;
        const int fd =
            ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_CLOEXEC);
        if (fd >= 0)
          accept_client(fd, numeric_endpoint(reinterpret_cast<sockaddr*>(&peer), peer_len));
      }
      for (size_t i = 2; i < first_refused; ++i) {
        const int fd = fds[i].fd;
        if (!fds[i].revents || !clients.count(fd)) continue;
        const bool alive = fds[i].events == POLLOUT
                               ? !(fds[i].revents & (POLLERR | POLLHUP)) && flush(fd)
                               : receive(fd);
        if (!alive) drop(fd);
      }
      const auto after = Clock::now();
      for (size_t i = first_refused; i < fds.size(); ++i) {
        const int fd = fds[i].fd;
        if ((fds[i].revents && !drain(fd)) || after >= refused[fd]) {
          refused.erase(fd);
          ::close(fd);
        }
      }
      drop_silent_connections();
      serve_waiters();
    }
  }

  // A new connection: told its nonce (with a secret) and given kFirstRequestWithin to send a
  // request. When kMaxNewConnections have sent none, the oldest of them is closed: the run's
  // clients, which ask at once, always get in, however many silent ones a peer opens.
  void accept_client(int fd, const std::string& peer) {
    size_t fresh = 0;
    int oldest = -1;
    for (const auto& [other, c] : clients) {
      if (c.known) continue;
      ++fresh;
      if (oldest < 0 || c.first_request_by < clients[oldest].first_request_by) oldest = other;
    }
    if (fresh >= kMaxNewConnections) {
      std::fprintf(stderr,
                   "shardlens: the store on %s:%d closed the connection from %s: %zu "
                   "connections have sent no request yet\n",
                   address.c_str(), port, clients[oldest].peer.c_str(), fresh);
      drop(oldest);
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Client& c = clients[fd];
    c.peer = peer;
    c.first_request_by = Clock::now() + kFirstRequestWithin;
    if (secret.empty()) return;
    const auto nonce = make_store_nonce();
    const Bytes hello = encode_frame(kHello, {Bytes(nonce.begin(), nonce.end())});
    c.signer.emplace(secret, nonce.data());
    // A few bytes into a new socket's empty buffer: sent whole, or the client is gone.
    if (::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        ssize_t(hello.size()))
      drop(fd);
  }

  void drop_silent_connections() {
    const auto now = Clock::now();
    std::vector<int> silent;
    for (const auto& [fd, c] : clients)
      if (!c.known && now >= c.first_request_by) silent.push_back(fd);
    for (int fd : silent) {
      std::fprintf(stderr,
                   "shardlens: the store on %s:%d closed the connection from %s: no request "
                   "within %lld s\n",
                   address.c_str(), port, clients[fd].peer.c_str(),
                   static_cast<long long>(kFirstRequestWithin.count() / 1000));
      drop(fd);
    }
  }
};

SocketStoreServer::SocketStoreServer(const std::string& address, int port,
                                     const StoreLimits& limits, const StoreSecret& secret)
    : m_state(std::make_unique<State>()) {
  State& s = *m_state;
  s.limits = limits;
  s.secret = secret;
  // Every rank of a large run holds a connection or two: descriptors up to the hard limit.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  AddrInfo ai;
  resolve(address, port, ai);
  std::string why = "no address";
  for (addrinfo* a = ai.list; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 4096) == 0) {
      s.listen_fd = fd;
      break;
    }
    why = std::strerror(errno);
    if (errno == EADDRNOTAVAIL) why += " (it is not an address of this host)";
    ::close(fd);
  }
  if (s.listen_fd < 0) {
    throw RunFailure("cannot listen on " + address + ":" + std::to_string(port) + ": " + why);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&bound), &len);
  s.address = numeric_host(reinterpret_cast<sockaddr*>(&bound), len);
  s.port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                       : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (::pipe2(s.wake, O_CLOEXEC) != 0)
    throw RunFailure(std::string("cannot start the store: ") + std::strerror(errno));
  s.thread = std::thread([&s] { s.loop(); });
}

SocketStoreServer::~SocketStoreServer() {
  const char stop = 1;
  if (::write(m_state->wake[1], &stop, 1) < 0) {
    // The pipe cannot be full or closed here; if it were, join() would wait forever, so
    // fall back on closing the listener, which poll() reports too.
    ::shutdown(m_state->listen_fd, SHUT_RDWR);
  }
  m_state->thread.join();
}

int SocketStoreServer::port() const {
  return m_state->port;
}
const std::string& SocketStoreServer::address() const {
  return m_state->address;
}

// --- client ----------------------------------------------------------------------------------

namespace {

// How long a client without a secret waits for an authenticating store's greeting (sent as
// it accepts) before it takes the store for one that does not authenticate.
constexpr std::chrono::milliseconds kGreetingWithin{2000};

// Seconds of `d` for messages ("within 5 s"), rounded up so 300 ms is not "0 s".
std::string seconds_text(std::chrono::milliseconds d) {
  const int64_t ms = std::max<int64_t>(0, d.count());
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

int ms_until(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return int(std::clamp<int64_t>(left, 0, 60000));
}

// Waits until `fd` is ready for `events` or `deadline` passes (false).
bool wait_ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = ms_until(deadline);
    const int k = ::poll(&p, 1, ms);
    if (k > 0) return true;
    if (k < 0 && errno != EINTR) return true;  // let the read or write report it
    if (k == 0 && Clock::now() >= deadline) return false;
  }
}

struct Timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Sends all of `data` on the non-blocking `fd` by `deadline`; throws Timeout, or
// std::runtime_error when the connection fails.
void send_by(int fd, const Bytes& data, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t k = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (k > 0) {
      sent += size_t(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(fd, POLLOUT, deadline)) throw Timeout("it took no request");
      continue;
    }
    throw std::runtime_error(k < 0 ? std::strerror(errno) : "connection closed");
  }
}

// Connects the non-blocking `fd` by `deadline`: 0, or the errno of the failure (ETIMEDOUT
// when the deadline passed).
int connect_by(int fd, const sockaddr* addr, socklen_t len, Clock::time_point deadline) {
  if (::connect(fd, addr, len) == 0) return 0;
  if (errno != EINPROGRESS && errno != EINTR) return errno;
  if (!wait_ready(fd, POLLOUT, deadline)) return ETIMEDOUT;
  int err = 0;
  socklen_t err_len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) return errno;
  return err;
}

}  // namespace

SocketStoreClient::SocketStoreClient(const std::string& address, int port,
                                     std::chrono::milliseconds timeout, const StoreSecret& secret,
                                     const FindSecret& find_secret)
    : m_where(address + ":" + std::to_string(port)), m_secret(secret), m_timeout(timeout) {
  // One deadline for the connection and the first answer: a peer that accepts but never
  // answers (not a store, or a stopped one) is given up on with the rest.
  const auto deadline = Clock::now() + timeout;
  std::string why;
  for (auto pause = std::chrono::milliseconds(20);;
       pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    AddrInfo ai;
    resolve(address, port, ai);
    for (addrinfo* a = ai.list; a && m_fd < 0; a = a->ai_next) {
      const int fd =
          ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
      if (fd < 0) {
        why = std::strerror(errno);
        continue;
      }
      if (const int err = connect_by(fd, a->ai_addr, a->ai_addrlen, deadline); err == 0) {
        m_fd = fd;
      } else {
        why = err == ETIMEDOUT ? "the connection was not accepted" : std::strerror(err);
        ::close(fd);
      }
    }
    if (m_fd >= 0) break;
    if (Clock::now() + pause > deadline) {
      throw RunFailure("cannot reach the store at " + m_where + " within " + seconds_text(timeout) +
                       ": " + why);
    }
    std::this_thread::sleep_for(pause);
  }
  const int one = 1;
  ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // The handshake: with a secret, the store's nonce first; then a request every store
  // answers at once.
  try {
    if (m_secret.empty() && find_secret) {
      // A store that authenticates greets at once; one that does not says nothing first.
      if (wait_ready(m_fd, POLLIN, std::min(deadline, Clock::now() + kGreetingWithin)))
        if (std::optional<StoreSecret> found = find_secret()) m_secret = std::move(*found);
    }
    if (!m_secret.empty()) {
      uint8_t status = 0;
      const std::vector<Bytes> hello = read_frame(status, deadline, false);
      if (status != kHello || hello.size() != 1 || hello[0].size() != kStoreNonceBytes)
        throw RunFailure("the store at " + m_where +
                         " does not authenticate its clients, and this process has a secret (" +
                         kStoreSecretVariable + "): every process of the run needs the same");
      m_signer.emplace(m_secret, hello[0].data());
    }
    exchange(kNumKeys, {}, deadline);
  } catch (const Timeout&) {
    ::close(m_fd);
    m_fd = -1;
    throw RunFailure("the store at " + m_where +
                     " accepted the connection but did not answer within " + seconds_text(timeout) +
                     (m_secret.empty() ? std::string(" (is it a ShardLens store?)")
                                       : " (is it a ShardLens store, hosted with the run's " +
                                             std::string(kStoreSecretVariable) + "?)"));
  } catch (const std::exception& e) {
    ::close(m_fd);
    m_fd = -1;
    throw RunFailure(e.what());
  }
}

SocketStoreClient::~SocketStoreClient() {
  if (m_fd >= 0) ::close(m_fd);
}

std::vector<Bytes> SocketStoreClient::read_frame(uint8_t& status, Clock::time_point deadline,
                                                 bool tagged) {
  uint8_t chunk[65536];
  std::vector<Bytes> reply;
  for (;;) {
    const size_t used = parse_frame(m_in, status, reply);
    const size_t whole = used + (tagged ? kStoreTagBytes : 0);
    if (used > 0 && m_in.size() >= whole) {
      if (tagged && !m_signer->verify(false, m_in.data(), used, m_in.data() + used)) {
        throw std::runtime_error(
            "the reply of the store at " + m_where + " is not signed with this run's secret (" +
            (status == kError && !reply.empty() ? "it says: " + text_of(reply[0]) + "; "
                                                : std::string()) +
            "is " + kStoreSecretVariable + " the same in every process of the run?)");
      }
      m_in.erase(m_in.begin(), m_in.begin() + long(whole));
      return reply;
    }
    if (status == kHello && used > 0 && tagged)
      throw std::runtime_error("the store at " + m_where + " sent a second greeting");
    const ssize_t k = ::recv(m_fd, chunk, sizeof chunk, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(m_fd, POLLIN, deadline)) throw Timeout("no reply in time");
      continue;
    }
    if (k == 0) throw std::runtime_error("the store at " + m_where + " closed the connection");
    if (k < 0)
      throw std::runtime_error("cannot reach the store at " + m_where + ": " +
                               std::strerror(errno));
    m_in.insert(m_in.end(), chunk, chunk + k);
  }
}

std::vector<Bytes> SocketStoreClient::exchange(uint8_t op, const std::vector<Bytes>& items,
                                               std::chrono::steady_clock::time_point deadline) {
  Bytes frame = encode_frame(op, items);
  if (m_signer) {
    const auto tag = m_signer->sign(true, frame.data(), frame.size());
    frame.insert(frame.end(), tag.begin(), tag.end());
  }
  try {
    send_by(m_fd, frame, deadline);
  } catch (const Timeout&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot reach the store at " + m_where + ": " + e.what());
  }
  uint8_t status = 0;
  std::vector<Bytes> reply = read_frame(status, deadline, m_signer.has_value());
  if (status == kHello)
    throw RunFailure("the store at " + m_where + " authenticates its clients (" +
                     kStoreSecretVariable +
                     "), and this process has no secret: every process "
                     "of the run needs the same");
  if (status == kTimedOut) throw RunFailure("timed out in the store at " + m_where);
  if (status != kOk) {
    throw RunFailure("the store at " + m_where + " refused a request" +
                     (reply.empty() ? "" : ": " + text_of(reply[0])));
  }
  return reply;
}

std::vector<Bytes> SocketStoreClient::call(uint8_t op, const std::vector<Bytes>& items) {
  std::lock_guard lock(m_mutex);
  if (m_fd < 0)
    throw RunFailure("the store at " + m_where + " is no longer reachable (earlier: " + m_broken +
                     ")");
  // The server answers a get or wait when its wait ends; anything else at once. Past that
  // (plus a margin for the network) the store is lost.
  std::chrono::milliseconds longest = m_timeout;
  if (op == kGet && items.size() == 2)
    longest = std::chrono::milliseconds(decode_u64(items[1].data()));
  if (op == kWait) longest = std::chrono::milliseconds(decode_u64(items[0].data()));
  const auto deadline = Clock::now() + longest + kStoreReplyMargin;
  try {
    return exchange(op, items, deadline);
  } catch (const RunFailure&) {
    throw;  // the store answered: the connection is still in step
  } catch (const std::exception& e) {
    // A reply still on its way would be read as the next request's: this connection is
    // done, and every later request says so at once instead of waiting again.
    const bool late = dynamic_cast<const Timeout*>(&e) != nullptr;
    const std::string what = late
                                 ? "the store at " + m_where + " did not answer: no reply within " +
                                       seconds_text(longest + kStoreReplyMargin)
                                 : std::string(e.what());
    m_broken = what;
    ::close(m_fd);
    m_fd = -1;
    throw RunFailure(what);
  }
}

void SocketStoreClient::set(const std::string& key, const Bytes& value) {
  call(kSet, {bytes_of(key), value});
}

Bytes SocketStoreClient::get(const std::string& key) {
  try {
    return call(kGet, {bytes_of(key), encode_u64(millis(m_timeout))}).at(0);
  } catch (const RunFailure& e) {
    throw RunFailure(std::string(e.what()) + " (waiting for key '" + key + "')");
  }
}

int64_t SocketStoreClient::add(const std::string& key, int64_t delta) {
  return std::stoll(text_of(call(kAdd, {bytes_of(key), bytes_of(std::to_string(delta))}).at(0)));
}

Bytes SocketStoreClient::compare_set(const std::string& key, const Bytes& expected,
                                     const Bytes& desired) {
  return call(kCompareSet, {bytes_of(key), expected, desired}).at(0);
}

bool SocketStoreClient::remove(const std::string& key) {
  return text_of(call(kDelete, {bytes_of(key)}).at(0)) == "1";
}

bool SocketStoreClient::check(const std::vector<std::string>& keys) {
  std::vector<Bytes> items;
  for (const std::string& k : keys) items.push_back(bytes_of(k));
  return text_of(call(kCheck, items).at(0)) == "1";
}

int64_t SocketStoreClient::num_keys() {
  return std::stoll(text_of(call(kNumKeys, {}).at(0)));
}

void SocketStoreClient::wait(const std::vector<std::string>& keys,
                             std::chrono::milliseconds timeout) {
  std::vector<Bytes> items = {encode_u64(millis(timeout))};
  for (const std::string& k : keys) items.push_back(bytes_of(k));
  try {
    call(kWait, items);
  } catch (const RunFailure& e) {
    throw RunFailure(std::string(e.what()) + " (waiting for " + join_keys(keys) + ")");
  }
}

}  // namespace shardlens

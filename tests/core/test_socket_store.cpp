// The run's own network store (core/platform/socket_store.h): c10d's semantics over real
// sockets, and that it listens on the one address it is given.
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/platform/socket_store.h"
#include "core/platform/store_auth.h"
#include "core/realrun/rank_protocol.h"
#include "core/vocabulary/types.h"

using namespace shardlens;
using namespace std::chrono_literals;

namespace {

Bytes b(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

// Listening TCP sockets of this process, as "ADDR:PORT" in /proc/net/tcp's hex form.
std::vector<std::string> listening_entries(int port) {
  std::ifstream in("/proc/self/net/tcp");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> out;
  char want[8];
  std::snprintf(want, sizeof want, ":%04X", port);
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string sl, local, remote, state;
    f >> sl >> local >> remote >> state;
    if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == want)
      out.push_back(local);
  }
  return out;
}

int connect_raw(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Everything the peer sends until it closes the connection (or `limit` passes).
std::string read_until_closed(int fd, std::chrono::milliseconds limit) {
  timeval tv{};
  tv.tv_sec = long(limit.count() / 1000);
  tv.tv_usec = long(limit.count() % 1000) * 1000;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  char chunk[4096];
  for (;;) {
    const ssize_t k = ::recv(fd, chunk, sizeof chunk, 0);
    if (k <= 0) return out;
    out.append(chunk, size_t(k));
  }
}

}  // namespace

TEST(SocketStore, SetGetAddCompareSetDeleteAcrossClients) {
  SocketStoreServer server("127.0.0.1", 0);
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(server.address(), "127.0.0.1");
  SocketStoreClient a("127.0.0.1", server.port(), 5s), c("127.0.0.1", server.port(), 5s);
  a.set("k", b("value"));
  EXPECT_EQ(c.get("k"), b("value"));
  EXPECT_TRUE(c.check({"k"}));
  EXPECT_FALSE(c.check({"k", "absent"}));
  EXPECT_EQ(a.add("n", 5), 5);
  EXPECT_EQ(c.add("n", -2), 3);
  EXPECT_EQ(a.get("n"), b("3"));  // c10d keeps counters as decimal text
  // compare_set: absent key with empty expectation sets; a wrong expectation changes nothing.
  EXPECT_EQ(a.compare_set("cas", {}, b("1")), b("1"));
  EXPECT_EQ(c.compare_set("cas", b("2"), b("3")), b("1"));
  EXPECT_EQ(c.compare_set("cas", b("1"), b("3")), b("3"));
  EXPECT_EQ(a.num_keys(), 3);
  EXPECT_TRUE(a.remove("cas"));
  EXPECT_FALSE(a.remove("cas"));
  EXPECT_EQ(c.num_keys(), 2);
  // A value far larger than one socket buffer, with every byte value.
  Bytes big(5'000'000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 131 + 7);
  a.set("big", big);
  EXPECT_EQ(c.get("big"), big);
}

TEST(SocketStore, GetAndWaitBlockUntilAnotherClientSets) {
  SocketStoreServer server("127.0.0.1", 0);
  SocketStoreClient waiter("127.0.0.1", server.port(), 10s);
  std::thread setter([port = server.port()] {
    SocketStoreClient s("127.0.0.1", port, 5s);
    std::this_thread::sleep_for(200ms);
    s.set("late", b("here"));
    std::this_thread::sleep_for(100ms);
    s.set("later", b("x"));
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(waiter.get("late"), b("here"));
  waiter.wait({"late", "later"}, 5s);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
  setter.join();
}

TEST(SocketStore, WaitAndGetTimeOutNamingTheKey) {
  SocketStoreServer server("127.0.0.1", 0);
  SocketStoreClient c("127.0.0.1", server.port(), 300ms);
  const auto start = std::chrono::steady_clock::now();
  try {
    c.wait({"never"}, 300ms);
    FAIL() << "wait returned";
  } catch (const RunFailure& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("never"), std::string::npos) << e.what();
  }
  try {
    c.get("nor-this");
    FAIL() << "get returned";
  } catch (const RunFailure& e) {
    EXPECT_NE(std::string(e.what()).find("nor-this"), std::string::npos) << e.what();
  }
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 550ms);
  EXPECT_LT(took, 5s);
  c.set("after", b("still usable"));  // a timeout does not break the connection
  EXPECT_EQ(c.get("after"), b("still usable"));
}

TEST(SocketStore, ListensOnlyOnTheAddressItIsGiven) {
  // 127.0.0.2 is loopback too but a different address: a wildcard bind would accept it.
  SocketStoreServer server("127.0.0.1", 0);
  const std::vector<std::string> entries = listening_entries(server.port());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].substr(0, 8), "0100007F");  // 127.0.0.1, not 00000000 (every address)
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in other{};
  other.sin_family = AF_INET;
  other.sin_port = htons(uint16_t(server.port()));
  inet_pton(AF_INET, "127.0.0.2", &other.sin_addr);
  EXPECT_NE(::connect(fd, reinterpret_cast<sockaddr*>(&other), sizeof other), 0)
      << "the store accepted a connection on 127.0.0.2";
  ::close(fd);
}

TEST(SocketStore, AnAddressOfAnotherHostIsRefusedByName) {
  try {
    SocketStoreServer server("192.0.2.7", 0);  // TEST-NET-1: never one of ours
    FAIL() << "listened on 192.0.2.7";
  } catch (const RunFailure& e) {
    EXPECT_NE(std::string(e.what()).find("192.0.2.7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not an address of this host"), std::string::npos)
        << e.what();
  }
}

TEST(SocketStore, ClientWaitsForALateServerAndGivesUpNamingIt) {
  // Find a free port, then start the server on it only after the client began connecting.
  int port = 0;
  {
    SocketStoreServer probe("127.0.0.1", 0);
    port = probe.port();
  }
  std::unique_ptr<SocketStoreServer> server;
  std::thread late([&] {
    std::this_thread::sleep_for(300ms);
    server = std::make_unique<SocketStoreServer>("127.0.0.1", port);
  });
  SocketStoreClient c("127.0.0.1", port, 10s);
  late.join();
  c.set("k", b("v"));
  EXPECT_EQ(c.get("k"), b("v"));
  server.reset();
  try {
    SocketStoreClient gone("127.0.0.1", port, 200ms);
    FAIL() << "connected to a store that is gone";
  } catch (const RunFailure& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << e.what();
  }
}

TEST(SocketStore, AServerThatGoesAwayEndsAWaitAtOnce) {
  auto server = std::make_unique<SocketStoreServer>("127.0.0.1", 0);
  SocketStoreClient c("127.0.0.1", server->port(), 30s);
  std::thread stop([&] {
    std::this_thread::sleep_for(200ms);
    server.reset();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(c.wait({"never"}, 30s), RunFailure);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  stop.join();
}

TEST(SocketStore, GarbageFromAPeerIsHungUpOnWithoutHarmingOthers) {
  SocketStoreServer server("127.0.0.1", 0);
  SocketStoreClient good("127.0.0.1", server.port(), 5s);
  good.set("k", b("v"));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(server.port()));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  // op 1 with 2^32-1 items, then a value claiming 2^63 bytes: refused, connection closed.
  const uint8_t junk[] = {1, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x80};
  ASSERT_EQ(::send(fd, junk, sizeof junk, 0), ssize_t(sizeof junk));
  const std::string said = read_until_closed(fd, 5s);  // the server says why, then hangs up
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said[0], 2) << "an error status";
  EXPECT_NE(said.find("refused"), std::string::npos) << said;
  ::close(fd);
  EXPECT_EQ(good.get("k"), b("v"));
}

// A set request's frame up to (not including) the value's bytes: op 1, 2 items, the key,
// then the value's uint64 length.
Bytes set_header(const std::string& key, uint64_t value_length) {
  Bytes out = {1, 2, 0, 0, 0};
  for (uint64_t v : {uint64_t(key.size())}) {
    for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
  }
  out.insert(out.end(), key.begin(), key.end());
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(value_length >> (8 * i)));
  return out;
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(SocketStore, AValueOverTheLimitIsRefusedOnItsLengthAlone) {
  const StoreLimits limits{uint64_t(1) << 20, uint64_t(4) << 20};
  SocketStoreServer server("127.0.0.1", 0, limits);
  SocketStoreClient good("127.0.0.1", server.port(), 5s);
  good.set("k", b("v"));
  const long rss_before = peak_rss_kb();
  // 1.5 GB announced, and one byte over the limit: neither body is ever sent.
  for (const uint64_t length : {uint64_t(1500) * 1000 * 1000, limits.value_bytes + 1}) {
    SCOPED_TRACE(length);
    const int fd = connect_raw(server.port());
    const Bytes header = set_header("huge", length);
    ASSERT_EQ(::send(fd, header.data(), header.size(), 0), ssize_t(header.size()));
    const auto start = std::chrono::steady_clock::now();
    const std::string said = read_until_closed(fd, 5s);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "refused at once";
    ASSERT_FALSE(said.empty());
    EXPECT_EQ(said[0], 2) << "an error status";
    EXPECT_NE(said.find(std::to_string(length) + " bytes"), std::string::npos) << said;
    EXPECT_NE(said.find(std::to_string(limits.value_bytes)), std::string::npos) << said;
    ::close(fd);
  }
  EXPECT_LT(peak_rss_kb() - rss_before, 64 * 1024) << "no memory taken for the announced value";
  // The store still serves the others, and takes a value exactly at the limit.
  EXPECT_EQ(good.get("k"), b("v"));
  const Bytes at_limit(limits.value_bytes, 7);
  good.set("at-limit", at_limit);
  SocketStoreClient other("127.0.0.1", server.port(), 5s);
  EXPECT_EQ(other.get("at-limit"), at_limit);
  EXPECT_FALSE(other.check({"huge"}));
}

TEST(SocketStore, ARunsStoreTakesItsRanksValuesAndRefusesAGigabyte) {
  // The limits a run of 2 ranks over 10,000 samples of 10 classes hosts its store with.
  SocketStoreServer server("127.0.0.1", 0, run_store_limits(10, 10000, 2, 64));
  SocketStoreClient rank("127.0.0.1", server.port(), 5s);
  std::vector<Record> records(10000, Record{1, 2, 3, 0});  // more than a rank's share
  rank.set("rank0/records", encode_records(records));
  rank.set("rank0/matrix", encode_matrix(Matrix(10)));
  const int fd = connect_raw(server.port());
  const Bytes header = set_header("huge", uint64_t(1500) * 1000 * 1000);
  ASSERT_EQ(::send(fd, header.data(), header.size(), 0), ssize_t(header.size()));
  const std::string said = read_until_closed(fd, 5s);
  ::close(fd);
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said[0], 2) << "an error status";
  EXPECT_EQ(decode_records(rank.get("rank0/records")).size(), 10000u);
}

TEST(SocketStore, TheStoreAsAWholeIsBoundedAndAFullStoreKeepsServing) {
  const StoreLimits limits{uint64_t(1) << 20, uint64_t(3) << 20};
  SocketStoreServer server("127.0.0.1", 0, limits);
  SocketStoreClient c("127.0.0.1", server.port(), 5s);
  const Bytes mib(uint64_t(1) << 20, 1);
  c.set("a", mib);
  c.set("b", mib);
  try {
    c.set("c", mib);  // 3 MiB of values plus the keys: past the limit
    FAIL() << "the store took more than its limit";
  } catch (const RunFailure& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(limits.total_bytes)), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(c.check({"c"}), RunFailure);             // that client was hung up on
  SocketStoreClient d("127.0.0.1", server.port(), 5s);  // the others are served
  EXPECT_FALSE(d.check({"c"}));
  EXPECT_EQ(d.get("a"), mib);
  d.set("a", Bytes(10, 2));  // replacing a value frees what it held
  d.set("c", mib);
  EXPECT_TRUE(d.remove("b"));  // and so does deleting one
  d.set("e", Bytes(1000, 3));
  EXPECT_EQ(d.get("c"), mib);
  EXPECT_EQ(d.num_keys(), 3);
}

// A get request's whole frame: op 2, 2 items, the key, then an 8-byte timeout of 0 ms.
Bytes get_frame(const std::string& key) {
  Bytes out = {2, 2, 0, 0, 0};
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(uint64_t(key.size()) >> (8 * i)));
  out.insert(out.end(), key.begin(), key.end());
  for (int i = 0; i < 8; ++i) out.push_back(i == 0 ? 8 : 0);  // the item's length: 8
  for (int i = 0; i < 8; ++i) out.push_back(0);
  return out;
}

TEST(SocketStore, AClientThatNeverReadsItsRepliesStallsNoOne) {
  // Before, the store's one thread sent each reply with a blocking send: a client asking
  // for a large value and never reading the answer stopped every other rank's requests.
  const StoreLimits limits{uint64_t(16) << 20, uint64_t(64) << 20};
  SocketStoreServer server("127.0.0.1", 0, limits);
  SocketStoreClient c("127.0.0.1", server.port(), 5s);
  const Bytes big(uint64_t(8) << 20, 7);
  c.set("big", big);
  const int reader_fd = connect_raw(server.port());     // asks, and never reads
  const int pipelined_fd = connect_raw(server.port());  // asks for 20 copies at once
  const Bytes one = get_frame("big");
  ASSERT_EQ(::send(reader_fd, one.data(), one.size(), 0), ssize_t(one.size()));
  Bytes twenty;
  for (int i = 0; i < 20; ++i) twenty.insert(twenty.end(), one.begin(), one.end());
  ASSERT_EQ(::send(pipelined_fd, twenty.data(), twenty.size(), 0), ssize_t(twenty.size()));
  std::this_thread::sleep_for(300ms);
  const long rss_before = peak_rss_kb();
  const auto start = std::chrono::steady_clock::now();
  SocketStoreClient d("127.0.0.1", server.port(), 5s);
  d.set("k", b("v"));
  EXPECT_EQ(d.get("k"), b("v"));
  EXPECT_EQ(d.get("big"), big);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  // 20 unread copies of 8 MiB would be 160 MiB: the replies not read stay within the
  // store's 64 MiB bound (the client asking for them is hung up on past it).
  EXPECT_LT(peak_rss_kb() - rss_before, 96 * 1024);
  ::close(reader_fd);
  ::close(pipelined_fd);
  EXPECT_EQ(c.get("k"), b("v"));
}

// A listener that takes connections (the kernel completes them) but never answers.
struct SilentListener {
  int fd = -1;
  int port = 0;
  explicit SilentListener(int backlog) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd, backlog), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd); }
};

std::string failure_of_client(int port, std::chrono::milliseconds timeout,
                              std::chrono::steady_clock::duration& took) {
  const auto start = std::chrono::steady_clock::now();
  try {
    SocketStoreClient c("127.0.0.1", port, timeout);
    took = std::chrono::steady_clock::now() - start;
    return "(connected)";
  } catch (const RunFailure& e) {
    took = std::chrono::steady_clock::now() - start;
    return e.what();
  }
}

TEST(SocketStore, AListenerThatNeverAnswersIsGivenUpOnAtTheTimeout) {
  SilentListener silent(16);
  std::chrono::steady_clock::duration took{};
  const std::string why = failure_of_client(silent.port, 1s, took);
  EXPECT_NE(why.find("127.0.0.1:" + std::to_string(silent.port)), std::string::npos) << why;
  EXPECT_NE(why.find("1 s"), std::string::npos) << why;
  EXPECT_NE(why.find("did not answer"), std::string::npos) << why;
  EXPECT_GE(took, 900ms);
  EXPECT_LT(took, 1s + 1500ms);
}

TEST(SocketStore, AListenerThatNeverAcceptsIsGivenUpOnAtTheTimeout) {
  // Backlog 0 and nobody calling accept(): once the queue is full, further connections are
  // never completed (the kernel drops their SYNs).
  SilentListener full(0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(full.port));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    fillers.push_back(fd);
  }
  std::this_thread::sleep_for(100ms);
  std::chrono::steady_clock::duration took{};
  const std::string why = failure_of_client(full.port, 1s, took);
  for (int fd : fillers) ::close(fd);
  EXPECT_NE(why.find("127.0.0.1:" + std::to_string(full.port)), std::string::npos) << why;
  EXPECT_NE(why.find("1 s"), std::string::npos) << why;
  EXPECT_GE(took, 900ms);
  EXPECT_LT(took, 1s + 1500ms);
}

TEST(SocketStore, AStoreThatFallsSilentEndsEachRequestAtItsDeadline) {
  // Answers the handshake like a store, then nothing more.
  SilentListener fake(16);
  std::thread host([&] {
    const int fd = ::accept(fake.fd, nullptr, nullptr);
    uint8_t request[5];
    ASSERT_EQ(::recv(fd, request, sizeof request, MSG_WAITALL), 5);  // num_keys: no items
    const uint8_t answer[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, '0'};
    ASSERT_EQ(::send(fd, answer, sizeof answer, 0), ssize_t(sizeof answer));
    std::this_thread::sleep_for(6s);
    ::close(fd);
  });
  SocketStoreClient c("127.0.0.1", fake.port, 1s);
  auto start = std::chrono::steady_clock::now();
  try {
    c.set("k", b("v"));
    FAIL() << "set returned";
  } catch (const RunFailure& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(fake.port)),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s + kStoreReplyMargin + 500ms);
  start = std::chrono::steady_clock::now();
  EXPECT_THROW(c.get("k"), RunFailure);  // the connection is given up: no second wait
  EXPECT_LT(std::chrono::steady_clock::now() - start, 100ms);
  host.join();
}

// --- a store with the run's secret --------------------------------------------------------

TEST(SocketStoreSecret, ClientsWithTheSecretAreServedAndOthersAreToldWhy) {
  const StoreSecret secret = make_store_secret(), other = make_store_secret();
  SocketStoreServer server("127.0.0.1", 0, {}, secret);
  SocketStoreClient a("127.0.0.1", server.port(), 5s, secret);
  SocketStoreClient c("127.0.0.1", server.port(), 5s, secret);
  a.set("rank0/matrix", b("cells"));
  EXPECT_EQ(c.get("rank0/matrix"), b("cells"));
  Bytes big(3'000'000);  // many frames' worth of bytes under one tag
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 7 + 1);
  c.set("big", big);
  EXPECT_EQ(a.get("big"), big);
  // Without the secret, with another one: refused, each naming the secret.
  const auto refusal = [&](const StoreSecret& s) {
    try {
      SocketStoreClient x("127.0.0.1", server.port(), 2s, s);
      x.get("rank0/matrix");
    } catch (const RunFailure& e) {
      return std::string(e.what());
    }
    return std::string("served");
  };
  EXPECT_NE(refusal({}).find("SHARDLENS_STORE_SECRET"), std::string::npos) << refusal({});
  EXPECT_NE(refusal(other).find("SHARDLENS_STORE_SECRET"), std::string::npos) << refusal(other);
  // A client with a secret meets a store without one: told so, not left waiting.
  SocketStoreServer plain("127.0.0.1", 0);
  try {
    SocketStoreClient x("127.0.0.1", plain.port(), 1s, secret);
    ADD_FAILURE() << "an unauthenticated store was taken for the run's";
  } catch (const RunFailure& e) {
    EXPECT_NE(std::string(e.what()).find("SHARDLENS_STORE_SECRET"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a.get("rank0/matrix"), b("cells"));  // the run's clients were never disturbed
}

// The tags bind each frame to its connection and its place: a valid frame copied from one
// connection, or sent twice, is refused (FrameSigner, as both ends use it).
TEST(SocketStoreSecret, FramesCannotBeReplayedOrMoved) {
  const StoreSecret secret = make_store_secret();
  const auto nonce = make_store_nonce(), another = make_store_nonce();
  const uint8_t frame[] = {1, 2, 3, 4, 5};
  FrameSigner client(secret, nonce.data()), server(secret, nonce.data()),
      elsewhere(secret, another.data());
  const auto tag = client.sign(true, frame, sizeof frame);
  EXPECT_FALSE(elsewhere.verify(true, frame, sizeof frame, tag.data()));  // another connection
  EXPECT_FALSE(server.verify(false, frame, sizeof frame, tag.data()));    // the other direction
  EXPECT_TRUE(server.verify(true, frame, sizeof frame, tag.data()));
  EXPECT_FALSE(server.verify(true, frame, sizeof frame, tag.data()));  // replayed
  const uint8_t changed[] = {1, 2, 3, 4, 6};
  const auto next = client.sign(true, frame, sizeof frame);
  EXPECT_FALSE(server.verify(true, changed, sizeof changed, next.data()));
  EXPECT_TRUE(server.verify(true, frame, sizeof frame, next.data()));
}

// A secret from the environment: hexadecimal, or a file only its owner may read.
TEST(SocketStoreSecret, TheEnvironmentsSecretIsCheckedBeforeItIsUsed) {
  const auto with = [](const char* name, const std::string& value, auto f) {
    ::setenv(name, value.c_str(), 1);
    f();
    ::unsetenv(name);
  };
  ::unsetenv("SHARDLENS_STORE_SECRET");
  ::unsetenv("SHARDLENS_STORE_SECRET_FILE");
  EXPECT_FALSE(store_secret_from_environment());
  const StoreSecret made = make_store_secret();
  with("SHARDLENS_STORE_SECRET", store_secret_text(made),
       [&] { EXPECT_EQ(*store_secret_from_environment(), made); });
  for (const std::string& bad :
       std::vector<std::string>{"abc", "zz" + std::string(40, '0'), std::string(30, 'a')})
    with("SHARDLENS_STORE_SECRET", bad,
         [] { EXPECT_THROW(store_secret_from_environment(), InputError); });
  char dir[] = "/tmp/shardlens-secret-XXXXXX";
  ASSERT_TRUE(::mkdtemp(dir));
  const std::string file = std::string(dir) + "/secret";
  std::ofstream(file) << store_secret_text(made) << "\n";
  ::chmod(file.c_str(), 0644);
  with("SHARDLENS_STORE_SECRET_FILE", file, [&] {
    try {
      store_secret_from_environment();
      ADD_FAILURE() << "a secret others can read was used";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("others may read it"), std::string::npos) << e.what();
    }
  });
  ::chmod(file.c_str(), 0600);
  with("SHARDLENS_STORE_SECRET_FILE", file,
       [&] { EXPECT_EQ(*store_secret_from_environment(), made); });
  ::unlink(file.c_str());
  ::rmdir(dir);
}

// Bounds on what a peer may hold: a second request while a wait is pending is refused, and
// connections that send nothing are closed (the others keep being served).
TEST(SocketStoreSecret, APeerHoldsOneWaitAndSilentConnectionsAreBounded) {
  SocketStoreServer server("127.0.0.1", 0);
  const int fd = connect_raw(server.port());
  // Two waits on one connection, the second before the first is answered.
  std::string frames;
  for (int i = 0; i < 2; ++i) {
    frames += std::string("\x08\x02\x00\x00\x00", 5);
    frames += std::string("\x08\0\0\0\0\0\0\0", 8) + std::string("\x10\x27\0\0\0\0\0\0", 8);
    frames += std::string("\x01\0\0\0\0\0\0\0", 8) + "k";
  }
  ASSERT_EQ(::send(fd, frames.data(), frames.size(), MSG_NOSIGNAL), ssize_t(frames.size()));
  const std::string answer = read_until_closed(fd, 3000ms);
  EXPECT_NE(answer.find("before its previous one was answered"), std::string::npos) << answer;
  ::close(fd);
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) idle.push_back(connect_raw(server.port()));
  // Past 64 silent connections the oldest are closed: a client that asks at once is served.
  SocketStoreClient c("127.0.0.1", server.port(), 5s);
  c.set("k", b("v"));
  EXPECT_EQ(c.get("k"), b("v"));
  for (int s : idle) ::close(s);
}

// Rank 0's secret for the ranks of its host: a file only this user may read, in a folder only
// this user may enter, gone with the store; one that others could read is not taken.
TEST(SocketStoreSecret, TheHostsSecretFileIsPrivateAndLeavesWithTheStore) {
  const int port = 64999;  // a name only: nothing listens
  const StoreSecret secret = make_store_secret();
  std::string path;
  {
    HostSecretFile file(secret, port);
    path = file.path();
    EXPECT_EQ(path, host_secret_path(port));
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat(path.substr(0, path.rfind('/')).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(read_host_secret(port), secret);
    ::chmod(path.c_str(), 0644);
    EXPECT_FALSE(read_host_secret(port));  // others could have read it: not trusted
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  EXPECT_FALSE(read_host_secret(port));
  // A client without a secret finds the host's when the store greets; the store serves it.
  HostSecretFile file(secret, port);
  SocketStoreServer server("127.0.0.1", 0, {}, secret);
  SocketStoreClient finds("127.0.0.1", server.port(), 5s, {},
                          [port] { return read_host_secret(port); });
  finds.set("k", b("v"));
  EXPECT_EQ(finds.get("k"), b("v"));
}

// A connection that has not yet sent a whole request may not send more than a first request
// of ours: a peer without the secret cannot hold the store's memory with a request that will
// never verify. A client that has made its first request sends values of any allowed size.
TEST(SocketStoreSecret, BeforeItsFirstRequestAPeerHoldsNoMemory) {
  const StoreSecret secret = make_store_secret();
  SocketStoreServer server("127.0.0.1", 0, {}, secret);
  const int fd = connect_raw(server.port());
  // A set whose 1 MB value is below every limit of the store, sent in full without a tag.
  std::string frame = std::string("\x01\x02\x00\x00\x00", 5) +
                      std::string("\x01\0\0\0\0\0\0\0", 8) + "k" +
                      std::string("\x00\x00\x10\0\0\0\0\0", 8) + std::string(1 << 20, 'x');
  [[maybe_unused]] const ssize_t sent = ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
  const std::string answer = read_until_closed(fd, 3000ms);
  EXPECT_NE(answer.find("before its first whole request"), std::string::npos) << answer.size();
  ::close(fd);
  SocketStoreClient rank("127.0.0.1", server.port(), 5s, secret);
  rank.set("big", Bytes(1 << 20, 7));
  EXPECT_EQ(rank.get("big").size(), size_t(1) << 20);
}

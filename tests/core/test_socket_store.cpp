// The run's own network store (core/platform/socket_store.h): c10d's semantics over real
// sockets, and that it listens on the one address it is given.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/platform/socket_store.h"

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
  char c;
  EXPECT_EQ(::recv(fd, &c, 1, 0), 0);  // the server hung up
  ::close(fd);
  EXPECT_EQ(good.get("k"), b("v"));
}

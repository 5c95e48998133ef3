// The store wire format of real runs: exact little-endian layouts, round trips, and
// rejection of bytes that are not exactly a record list or a matrix.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "core/realrun/rank_protocol.h"
#include "tests/core/rank_fakes.h"

using namespace shardlens;

namespace {

bool same_records(const std::vector<Record>& a, const std::vector<Record>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].index != b[i].index || a[i].target != b[i].target ||
        a[i].prediction != b[i].prediction || a[i].flags != b[i].flags)
      return false;
  }
  return true;
}

template <class F>
std::string failure_of(F f) {
  try {
    f();
  } catch (const RunFailure& e) {
    return e.what();
  }
  return "(no RunFailure)";
}

TEST(RankProtocol, RecordsHaveTheDocumentedLayout) {
  const Bytes bytes = encode_records({Record{0x0102030405060708, 0x11121314, -2, kSanity}});
  const Bytes expected = {1,    0,    0,    0,    0,    0,    0,    0,     // uint64 count
                          0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // int64 index
                          0x14, 0x13, 0x12, 0x11,                          // int32 target
                          0xfe, 0xff, 0xff, 0xff,                          // int32 prediction -2
                          0x02};                                           // uint8 flags
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(encode_records({}), Bytes(8, 0));
}

TEST(RankProtocol, RecordsRoundTrip) {
  const std::vector<Record> records = {
      {0, 0, 0, 0},
      {std::numeric_limits<int64_t>::max(), 9, 3, kPadding},
      {17, -1, 2, kPadding | kSanity},  // target -1: an ignore_index sample
  };
  EXPECT_TRUE(same_records(decode_records(encode_records(records)), records));
  EXPECT_TRUE(decode_records(encode_records({})).empty());
}

TEST(RankProtocol, MalformedRecordsAreRejected) {
  const Bytes good = encode_records({{1, 2, 3, 0}, {4, 5, 6, 1}});
  ASSERT_EQ(good.size(), 8u + 2 * 17);

  Bytes truncated(good.begin(), good.end() - 1);
  EXPECT_NE(failure_of([&] { decode_records(truncated); }).find("malformed records"),
            std::string::npos);
  Bytes trailing = good;
  trailing.push_back(0);
  EXPECT_NE(failure_of([&] { decode_records(trailing); }).find("malformed records"),
            std::string::npos);
  EXPECT_NE(failure_of([&] {
              decode_records(Bytes{1, 2, 3});
            }).find("too short"),
            std::string::npos);
  // A count no buffer could hold is refused before anything is allocated for it.
  Bytes huge = good;
  for (int i = 0; i < 8; ++i) huge[size_t(i)] = 0xff;
  EXPECT_NE(failure_of([&] { decode_records(huge); }).find("records announced"), std::string::npos);
}

TEST(RankProtocol, MatrixHasTheDocumentedLayout) {
  Matrix m(1);
  m.cells = {1.0};
  const Bytes expected = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};  // int32 1, float64 1.0
  EXPECT_EQ(encode_matrix(m), expected);
}

TEST(RankProtocol, MatrixRoundTripsExactly) {
  Matrix m(3);
  m.cells = {0, 1, 2048, 0.1, 1e300, std::numeric_limits<double>::infinity(), 3, 4, 5};
  const Matrix back = decode_matrix(encode_matrix(m), 3);
  EXPECT_EQ(back.classes, 3);
  EXPECT_EQ(back.cells, m.cells);
  const Matrix empty = decode_matrix(encode_matrix(Matrix(0)), 0);
  EXPECT_EQ(empty.classes, 0);
}

TEST(RankProtocol, MalformedMatricesAreRejected) {
  const Bytes good = encode_matrix(Matrix(2));
  ASSERT_EQ(good.size(), 4u + 4 * 8);
  EXPECT_EQ(failure_of([&] { decode_matrix(good, 3); }),
            "malformed matrix: 2 classes, the run has 3");
  EXPECT_NE(failure_of([&] {
              decode_matrix(Bytes(good.begin(), good.end() - 8), 2);
            }).find("24 bytes of cells for 2 x 2"),
            std::string::npos);
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_NE(failure_of([&] { decode_matrix(longer, 2); }).find("malformed matrix"),
            std::string::npos);
  EXPECT_NE(failure_of([&] {
              decode_matrix(Bytes{2, 0}, 2);
            }).find("too short"),
            std::string::npos);
}

TEST(RankProtocol, TextRoundTrips) {
  const std::string note = "rank 1: all_gather failed: Connection reset \xc3\xa9";
  EXPECT_EQ(decode_text(encode_text(note)), note);
  EXPECT_EQ(encode_text("ab"), (Bytes{'a', 'b'}));
}

TEST(RankProtocol, KeysAreTheOnesRanksAndLaunchersShare) {
  EXPECT_EQ(key_records(3), "rank3/records");
  EXPECT_EQ(key_matrix(0), "rank0/matrix");
  EXPECT_EQ(key_done(12), "rank12/done");
  EXPECT_EQ(key_error(1), "rank1/error");
}

class BrokenStore : public RankStore {
 public:
  void set(const std::string&, const Bytes&) override {
    throw std::runtime_error("Connection refused\nat line 2 of the trace");
  }
  Bytes get(const std::string&) override { throw std::runtime_error("down"); }
  bool check(const std::string&) override { throw std::runtime_error("down"); }
  void wait(const std::vector<std::string>&, std::chrono::milliseconds) override {
    throw std::runtime_error("down");
  }
  std::shared_ptr<RankStore> prefixed(const std::string&) override {
    return std::make_shared<BrokenStore>();
  }
};

TEST(RankProtocol, AnUnreachableStoreIsARunFailureOrAbsentKey) {
  BrokenStore store;
  EXPECT_FALSE(has_key(store, "x"));
  EXPECT_EQ(failure_of([&] { publish(store, "x", Bytes{1}); }),
            "cannot reach the store: Connection refused");
}

TEST(RankProtocol, MemoryStorePrefixesLikeC10d) {
  // The fake the other tests use: a view's keys are prefix + "/" + key in the shared store.
  test::MemoryStore store;
  const auto view = store.prefixed(kRunStorePrefix);
  view->set(key_done(0), Bytes{1});
  EXPECT_TRUE(view->check("rank0/done"));
  EXPECT_FALSE(store.check("rank0/done"));
  EXPECT_EQ(store.keys(), std::vector<std::string>{"shardlens//rank0/done"});
  EXPECT_THROW(view->wait({"rank1/done"}, std::chrono::milliseconds(10)), std::runtime_error);
}

// Ranks in threads, each started with worlds[rank] as its WORLD_SIZE, over one store; the
// failure each one reports ("" when it passed).
std::vector<std::string> check_worlds(const std::vector<int>& worlds,
                                      std::chrono::milliseconds timeout) {
  test::MemoryStore store;
  const auto run = store.prefixed(kRunStorePrefix);
  std::vector<std::string> out(worlds.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < worlds.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        agree_world_size(*run, int(r), worlds[r], timeout);
      } catch (const RunFailure& e) {
        out[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

TEST(RankProtocol, RanksThatAgreeOnTheWorldSizePass) {
  EXPECT_EQ(check_worlds({4, 4, 4, 4}, std::chrono::seconds(5)), std::vector<std::string>(4, ""));
  EXPECT_EQ(check_worlds({1}, std::chrono::seconds(5)), std::vector<std::string>{""});
}

TEST(RankProtocol, ARankWithAnotherWorldSizeIsNamedWithBothSizes) {
  // Rank 2 was started with WORLD_SIZE 8, the others with 4: rank 2 fails, naming both; the
  // others agree with rank 0 (they then wait for rank 2 in the backend, whose timeout ends
  // the run, and rank 0 reads rank 2's error from the store).
  const std::vector<std::string> got = check_worlds({4, 4, 8, 4}, std::chrono::seconds(5));
  EXPECT_EQ(got[0], "");
  EXPECT_EQ(got[1], "");
  EXPECT_EQ(got[2],
            "the ranks disagree on WORLD_SIZE: rank 0 has 4, rank 2 has 8 (every rank must be "
            "started with the same)");
  EXPECT_EQ(got[3], "");
}

TEST(RankProtocol, ARankBeyondRankZerosWorldIsToldSo) {
  // 136 vs 272 as Gloo put it: rank 0 thinks the world is 2, rank 2 that it is 3.
  const std::vector<std::string> got = check_worlds({2, 2, 3}, std::chrono::seconds(5));
  EXPECT_EQ(got[0], "");
  EXPECT_EQ(got[1], "");
  EXPECT_NE(got[2].find("rank 0 has 2, rank 2 has 3"), std::string::npos) << got[2];
}

TEST(RankProtocol, RankZeroNeverWaitsAndTheOthersWaitForItWithinTheTimeout) {
  test::MemoryStore store;
  const auto start = std::chrono::steady_clock::now();
  // Rank 0 alone, its world of 3 not there yet: it publishes and goes on to the rendezvous.
  EXPECT_EQ(failure_of([&] { agree_world_size(store, 0, 3, std::chrono::seconds(30)); }),
            "(no RunFailure)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(store.check(key_world_size(0)));
  test::MemoryStore without_rank0;
  const std::string other =
      failure_of([&] { agree_world_size(without_rank0, 1, 3, std::chrono::milliseconds(200)); });
  EXPECT_EQ(other.rfind("rank 0 did not publish its WORLD_SIZE within 1 s", 0), 0u) << other;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(RankProtocol, RunStoreLimitsHoldWhatTheRanksPutAndNotMuchMore) {
  // 10 classes, 10,000 samples, 2 ranks, batches of 64.
  const StoreLimits small = run_store_limits(10, 10000, 2, 64);
  // A rank's records of every sample: 8 + 17 * 10,000 bytes; a matrix 4 + 8 * 100.
  EXPECT_GE(small.value_bytes, 8u + 17u * 10000u);
  EXPECT_GE(small.value_bytes, 804u);
  EXPECT_GE(small.total_bytes, 2 * (8u + 17u * 10000u) + 3 * 804u);
  // A 1.5 GB value is nothing such a run puts.
  EXPECT_LT(small.value_bytes, uint64_t(1500) * 1000 * 1000);
  EXPECT_LT(small.total_bytes, uint64_t(1500) * 1000 * 1000);
  // A run at the class cap: every value up to the matrix, 4 + 8 * 32768^2 bytes.
  const StoreLimits wide = run_store_limits(32768, 1000, 4, 64);
  EXPECT_EQ(wide.value_bytes, uint64_t(8589934596));
  EXPECT_EQ(kMaxStoreValueBytes, uint64_t(8589934596));
  EXPECT_GE(wide.total_bytes, 5 * uint64_t(8589934596));  // 4 ranks' and the reported one
}

}  // namespace

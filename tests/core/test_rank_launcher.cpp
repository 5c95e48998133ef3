// The launcher of real runs without LibTorch: assembling the run file from what ranks
// published to a store, naming the ranks that failed, the deadline loop over rank
// processes (fakes, and real child processes of /bin/sh), and rank 0's wait under torchrun.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "core/realrun/rank_launcher.h"
#include "core/runfile/run_evaluation.h"
#include "tests/core/rank_fakes.h"

using namespace shardlens;
using shardlens::test::MemoryStore;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// 5 samples of 2 classes (targets 0 1 1 0 1), world 2: rank 0 evaluates 0 2 4, rank 1
// evaluates 1 3 and pads with 0.
Labels labels() {
  Labels l;
  l.num_classes = 2;
  l.targets = {0, 1, 1, 0, 1};
  l.class_names = {"no", "yes"};
  return l;
}

RealRunConfig config() {
  RealRunConfig cfg;
  cfg.scenario.sampler.world_size = 2;
  cfg.scenario.loader.batch_size = 2;
  cfg.backend = "gloo";
  return cfg;
}

const std::vector<std::vector<Record>> kRecords = {
    {{0, 0, 0, 0}, {2, 1, 1, 0}, {4, 1, 0, 0}},
    {{1, 1, 1, 0}, {3, 0, 1, 0}, {0, 0, 0, kPadding}},
};

Matrix matrix2(double a, double b, double c, double d) {
  Matrix m(2);
  m.cells = {a, b, c, d};
  return m;
}

void publish_rank(RankStore& store, int r) {
  Matrix local(2);
  for (const Record& rec : kRecords[size_t(r)]) local.at(rec.target, rec.prediction) += 1;
  store.set(key_records(r), encode_records(kRecords[size_t(r)]));
  store.set(key_matrix(r), encode_matrix(local));
}

TEST(RankAssembly, ACompleteRunFromTheStore) {
  MemoryStore store;
  publish_rank(store, 0);
  publish_rank(store, 1);
  store.set(kKeySynced, encode_matrix(matrix2(2, 1, 1, 2)));
  store.set(kKeySyncNote, encode_text("a note"));
  store.set(key_done(0), Bytes{1});
  store.set(key_done(1), Bytes{1});

  const RunFile run = assemble_run(store, config(), labels(), 2, {}, "1.13.0");
  EXPECT_TRUE(run.meta.complete);
  EXPECT_EQ(run.meta.incomplete_reason, "");
  EXPECT_EQ(run.meta.source, "real");
  EXPECT_EQ(run.meta.backend, "gloo");
  EXPECT_EQ(run.meta.torch_version, "1.13.0");
  EXPECT_EQ(run.meta.world_size, 2);
  EXPECT_EQ(run.meta.dataset_size, 5);
  EXPECT_EQ(run.meta.class_counts, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(run.meta.class_names, labels().class_names);
  EXPECT_EQ(run.meta.sync_note, "a note");
  EXPECT_EQ(run.meta.batch_size, 2);
  EXPECT_TRUE(run.meta.failed_ranks.empty());
  ASSERT_EQ(run.records.ranks.size(), 2u);
  EXPECT_EQ(run.records.ranks[1].size(), 3u);
  EXPECT_EQ(run.records.ranks[1][2].flags, kPadding);
  // rank 0: (0,0) (1,1) (1,0); rank 1: (1,1) (0,1) (0,0).
  EXPECT_EQ(run.per_rank[0].cells, matrix2(1, 0, 1, 1).cells);
  EXPECT_EQ(run.per_rank[1].cells, matrix2(1, 1, 0, 1).cells);
  EXPECT_EQ(run.synced.cells, matrix2(2, 1, 1, 2).cells);
  // Each index once: 0 (0,0), 1 (1,1), 2 (1,1), 3 (0,1), 4 (1,0).
  // Built from the records when the run is opened (complete_evaluation), not stored.
  EXPECT_FALSE(run.expected.has_value());
  const Evaluation opened = evaluation_from_run(run, "assembled");
  ASSERT_TRUE(opened.expected.has_value());
  EXPECT_EQ(opened.expected->cells, matrix2(1, 1, 1, 2).cells);
  EXPECT_NO_THROW(validate_run(run, "assembled"));
}

// A synced matrix another process put in the store (the ranks' sum under --sync double,
// where the honest one is twice it) is named and not kept; the honest one is.
TEST(RankAssembly, ASyncedMatrixTheRanksContradictIsNamedNotKept) {
  for (const bool forged : {false, true}) {
    MemoryStore store;
    publish_rank(store, 0);
    publish_rank(store, 1);
    // Per-rank (1 0; 1 1) and (1 1; 0 1): their sum is (2 1; 1 2).
    store.set(kKeySynced, encode_matrix(forged ? matrix2(2, 1, 1, 2) : matrix2(4, 2, 2, 4)));
    store.set(key_done(0), Bytes{1});
    store.set(key_done(1), Bytes{1});
    RealRunConfig cfg = config();
    cfg.scenario.sync = SyncStrategy::Double;
    const RunFile run = assemble_run(store, cfg, labels(), 2, {}, "1.13.0");
    EXPECT_EQ(run.meta.complete, !forged);
    EXPECT_EQ(run.has_synced(), !forged);
    if (forged) {
      EXPECT_EQ(run.meta.incomplete_reason,
                "the synced matrix in the store is not the ranks' (row 0, column 0 holds 2 "
                "where --sync double of the ranks' matrices gives 4): a process other than "
                "rank 0 wrote it");
    }
  }
}

TEST(RankAssembly, AnIncompleteRunNamesTheFailedRank) {
  // Rank 1 was killed before publishing; rank 0 published, then its all_gather broke.
  MemoryStore store;
  publish_rank(store, 0);
  store.set(key_error(0), encode_text("all_gather of the per-rank matrices failed: closed"));
  std::vector<RankEnd> ends(2);
  ends[0].status = ExitStatus{1, 0};
  ends[1].status = ExitStatus{0, SIGKILL};
  const RankFailures failures = describe_rank_failures(store, ends);
  EXPECT_EQ(failures.failed, std::vector<int>{1});
  EXPECT_EQ(failures.reason,
            "rank 1 was killed by signal 9 (Killed); rank 0 exited with status 1 (all_gather of "
            "the per-rank matrices failed: closed)");

  const RunFile run = assemble_run(store, config(), labels(), 2, failures, "1.13.0");
  EXPECT_FALSE(run.meta.complete);
  EXPECT_EQ(run.meta.failed_ranks, std::vector<int>{1});
  EXPECT_EQ(run.meta.incomplete_reason, failures.reason);
  EXPECT_EQ(run.records.ranks[0].size(), 3u);
  EXPECT_TRUE(run.records.ranks[1].empty());
  EXPECT_EQ(run.per_rank[1].cells, matrix2(0, 0, 0, 0).cells);
  EXPECT_FALSE(run.has_synced());
  EXPECT_FALSE(run.expected.has_value());
  EXPECT_NO_THROW(validate_run(run, "assembled"));
}

TEST(RankAssembly, UnreadableValuesAreARunFailureNamingTheRank) {
  MemoryStore store;
  publish_rank(store, 0);
  store.set(key_records(1), Bytes{5, 0, 0});
  store.set(key_matrix(1), encode_matrix(Matrix(2)));
  try {
    assemble_run(store, config(), labels(), 2, {}, "x");
    FAIL() << "no exception";
  } catch (const RunFailure& e) {
    EXPECT_EQ(std::string(e.what()).rfind("rank 1 published malformed records", 0), 0u) << e.what();
  }
  store.set(key_records(1), encode_records({{7, 0, 0, 0}}));  // index 7 of 5 samples
  try {
    assemble_run(store, config(), labels(), 2, {}, "x");
    FAIL() << "no exception";
  } catch (const RunFailure& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("rank 1 published records: record 0 of rank 1", 0), 0u) << what;
    EXPECT_NE(what.find("dataset index 7 is outside [0, 5)"), std::string::npos) << what;
  }
}

TEST(RankAssembly, ExitStatusesInWords) {
  EXPECT_EQ(describe_status(ExitStatus{3, 0}), "exited with status 3");
  EXPECT_EQ(describe_status(ExitStatus{0, SIGKILL}), "was killed by signal 9 (Killed)");
  EXPECT_TRUE(ExitStatus{}.ok());
  EXPECT_FALSE((ExitStatus{0, SIGSEGV}.ok()));
}

// --- the deadline loop ------------------------------------------------------------------------

// A process that ends after `polls` polls with `status`, or never (polls < 0) until killed.
class FakeProcess : public RankProcess {
 public:
  FakeProcess(int polls, ExitStatus status) : m_polls(polls), m_status(status) {}
  std::optional<ExitStatus> poll() override {
    if (m_killed) return ExitStatus{0, SIGKILL};
    if (m_polls < 0) return std::nullopt;
    if (m_polls-- > 0) return std::nullopt;
    return m_status;
  }
  void kill() override {
    m_killed = true;
    ++kills;
  }
  int kills = 0;

 private:
  int m_polls;
  ExitStatus m_status;
  bool m_killed = false;
};

TEST(RankDeadline, AfterAFailureAHungRankIsKilledAndNamed) {
  std::vector<std::unique_ptr<RankProcess>> ranks;
  ranks.push_back(std::make_unique<FakeProcess>(2, ExitStatus{1, 0}));  // fails early
  ranks.push_back(std::make_unique<FakeProcess>(-1, ExitStatus{}));     // hangs
  ranks.push_back(std::make_unique<FakeProcess>(5, ExitStatus{}));      // finishes fine
  auto* hung = static_cast<FakeProcess*>(ranks[1].get());
  const auto start = Clock::now();
  const std::vector<RankEnd> ends = wait_for_ranks(ranks, milliseconds(150), milliseconds(5));
  const auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(150));
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_EQ(hung->kills, 1);
  EXPECT_TRUE(ends[1].killed_as_hung);
  EXPECT_FALSE(ends[0].killed_as_hung);
  EXPECT_FALSE(ends[2].killed_as_hung);
  EXPECT_EQ(ends[0].status.code, 1);
  EXPECT_TRUE(ends[2].status.ok());

  // Rank 1 published its records before hanging; rank 0 never did: both are root causes.
  MemoryStore store;
  publish_rank(store, 1);
  const RankFailures failures = describe_rank_failures(store, ends);
  EXPECT_EQ(failures.failed, (std::vector<int>{0, 1}));
  EXPECT_NE(failures.reason.find("rank 1 hung and was killed after the timeout"), std::string::npos)
      << failures.reason;
  EXPECT_NE(failures.reason.find("rank 0 exited with status 1"), std::string::npos)
      << failures.reason;
}

TEST(RankDeadline, WithoutAFailureNothingIsKilled) {
  std::vector<std::unique_ptr<RankProcess>> ranks;
  ranks.push_back(std::make_unique<FakeProcess>(40, ExitStatus{}));
  ranks.push_back(std::make_unique<FakeProcess>(3, ExitStatus{}));
  // Slower than the grace period, but nothing failed: the loop keeps waiting.
  const std::vector<RankEnd> ends = wait_for_ranks(ranks, milliseconds(10), milliseconds(2));
  for (const RankEnd& e : ends) {
    EXPECT_TRUE(e.status.ok());
    EXPECT_FALSE(e.killed_as_hung);
  }
  MemoryStore store;
  const RankFailures failures = describe_rank_failures(store, ends);
  EXPECT_TRUE(failures.failed.empty());
  EXPECT_EQ(failures.reason, "");
}

TEST(RankDeadline, RealProcessesGetTheRankEnvironment) {
  // The launcher's environment must not leak a store address of its own to the ranks.
  ::setenv("MASTER_PORT", "1234", 1);
  ::setenv("RANK", "9", 1);
  std::vector<std::unique_ptr<RankProcess>> ranks;
  const std::string check =
      "test \"$RANK\" = 1 && test \"$LOCAL_RANK\" = 1 && test \"$WORLD_SIZE\" = 2 && "
      "test \"$LOCAL_WORLD_SIZE\" = 2 && test \"$SHARDLENS_LAUNCHER\" = 1 && "
      "test \"$SHARDLENS_STORE_FILE\" = /tmp/x && test -z \"$MASTER_PORT\" && exit 7; exit 1";
  ranks.push_back(spawn_rank("/bin/sh", {"sh", "-c", "exit 0"}, 0, 2, {}));
  ranks.push_back(
      spawn_rank("/bin/sh", {"sh", "-c", check}, 1, 2, {"SHARDLENS_STORE_FILE=/tmp/x"}));
  ::unsetenv("MASTER_PORT");
  ::unsetenv("RANK");
  const std::vector<RankEnd> ends = wait_for_ranks(ranks, std::chrono::seconds(30));
  EXPECT_TRUE(ends[0].status.ok());
  EXPECT_EQ(ends[1].status.code, 7) << "the rank saw the wrong environment";
  EXPECT_THROW(spawn_rank("/nonexistent/shardlens", {"x"}, 0, 1, {}), RunFailure);
}

TEST(RankDeadline, ARealHungProcessIsKilledAfterTheGrace) {
  std::vector<std::unique_ptr<RankProcess>> ranks;
  ranks.push_back(spawn_rank("/bin/sh", {"sh", "-c", "exit 3"}, 0, 2, {}));
  ranks.push_back(spawn_rank("/bin/sh", {"sh", "-c", "exec sleep 60"}, 1, 2, {}));
  const auto start = Clock::now();
  const std::vector<RankEnd> ends = wait_for_ranks(ranks, milliseconds(200));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(ends[0].status.code, 3);
  EXPECT_TRUE(ends[1].killed_as_hung);
  EXPECT_EQ(ends[1].status.signal, SIGKILL);
}

TEST(RankDeadline, RankZeroUnderTorchrunGivesUpOnRanksThatNeverFinish) {
  // Rank 1 published its records and then failed (not a root cause); rank 2 never showed.
  MemoryStore store;
  store.set(key_done(0), Bytes{1});
  publish_rank(store, 1);
  const auto start = Clock::now();
  const RankFailures failures = await_ranks(store, 3, milliseconds(50));
  const auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(100));  // ranks 1 and 2 each waited for
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_EQ(failures.failed, std::vector<int>{2});
  EXPECT_EQ(failures.reason, "rank 2 did not finish");

  store.set(key_done(1), Bytes{1});
  store.set(key_done(2), Bytes{1});
  const RankFailures none = await_ranks(store, 3, milliseconds(50));
  EXPECT_TRUE(none.failed.empty());
  EXPECT_EQ(none.reason, "");
}

}  // namespace

TEST(RankDeadline, CancelTerminatesRunningRanksAndDescribesThem) {
  // Rank 0 has finished; rank 1 ends on SIGTERM; rank 2 ignores it and is killed after the
  // cancel grace. None is left running.
  std::vector<std::unique_ptr<RankProcess>> ranks;
  ranks.push_back(spawn_rank("/bin/sh", {"sh", "-c", "exit 0"}, 0, 3, {}));
  ranks.push_back(spawn_rank("/bin/sh", {"sh", "-c", "exec sleep 60"}, 1, 3, {}));
  ranks.push_back(spawn_rank("/bin/sh", {"sh", "-c", "trap '' TERM; exec sleep 60"}, 2, 3, {}));
  std::this_thread::sleep_for(milliseconds(300));  // rank 0 has ended, rank 2 set its trap
  const auto start = Clock::now();
  const std::vector<RankEnd> ends =
      wait_for_ranks(ranks, std::chrono::seconds(60), milliseconds(5), [] { return true; });
  const auto took = Clock::now() - start;
  EXPECT_GE(took, kCancelGrace);
  EXPECT_LT(took, kCancelGrace + std::chrono::seconds(10));
  EXPECT_TRUE(ends[0].status.ok());
  EXPECT_FALSE(ends[0].cancelled);
  EXPECT_TRUE(ends[1].cancelled);
  EXPECT_EQ(ends[1].status.signal, SIGTERM);
  EXPECT_TRUE(ends[2].cancelled);
  EXPECT_EQ(ends[2].status.signal, SIGKILL);
  MemoryStore store;
  const RankFailures failures = describe_rank_failures(store, ends);
  EXPECT_EQ(failures.failed, (std::vector<int>{1, 2}));
  EXPECT_NE(failures.reason.find("rank 1 was stopped by the cancel"), std::string::npos)
      << failures.reason;
}

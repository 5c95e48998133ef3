// Run files: round trips, numpy compatibility, and rejection of every kind of damage.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/sha256.h"
#include "core/report/report.h"
#include "core/runfile/run_evaluation.h"
#include "core/runfile/runfile.h"
#include "core/sim/engine.h"
#include "core/sim/lessons.h"
#include "core/vocabulary/types.h"
#include "tests/common/small_run.h"
#include "tests/common/test_rows.h"

namespace fs = std::filesystem;
using namespace shardlens;

namespace {

using shardlens::test::small_run;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("shardlens_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string pack(const std::map<std::string, std::string>& members) {
  const std::string path = temp_path("pack.npz");
  std::vector<std::pair<std::string, std::string>> list(members.begin(), members.end());
  write_npz(path, list);
  std::string bytes = read_file_bytes(path);
  fs::remove(path);
  return bytes;
}

std::string run_file_bytes(const RunFile& run) {
  auto members = run_file_members(run);
  return pack(std::map<std::string, std::string>(members.begin(), members.end()));
}

// Re-packs an archive after `edit` changed its members, refreshing meta.json's checksums
// unless told not to, so a test reaches the check it targets.
std::string repack(const std::string& bytes,
                   const std::function<void(std::map<std::string, std::string>&)>& edit,
                   bool refresh_checksums = true) {
  auto members = npz_members_from_bytes(bytes, "test");
  edit(members);
  if (refresh_checksums && members.count("meta.json")) {
    auto meta = nlohmann::json::parse(members["meta.json"]);
    if (!meta.is_object()) return pack(members);
    nlohmann::json sums = nlohmann::json::object();
    for (const auto& [name, data] : members) {
      if (name != "meta.json") sums[name] = {{"sha256", sha256_hex(data)}, {"bytes", data.size()}};
    }
    meta["members"] = sums;
    members["meta.json"] = meta.dump();
  }
  return pack(members);
}

std::string edit_meta(const std::string& bytes, const std::function<void(nlohmann::json&)>& edit) {
  return repack(bytes, [&](auto& members) {
    auto meta = nlohmann::json::parse(members["meta.json"]);
    edit(meta);
    members["meta.json"] = meta.dump();
  });
}

void expect_input_error(const std::string& bytes, const std::string& needle) {
  try {
    parse_run_file(bytes, "bad.slrun");
    FAIL() << "accepted a run file that should fail with: " << needle;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.slrun"), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FilesAreHashedInChunks) {
  // More than one 1 MiB read chunk, and a size that is not a multiple of it.
  std::string bytes(3 * 1048576 + 17, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131) >> 3);
  const std::string path = temp_path("sha256.bin");
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  EXPECT_EQ(sha256_file_hex(path), sha256_hex(bytes));
  std::ofstream(temp_path("sha256-empty.bin"), std::ios::binary).flush();
  EXPECT_EQ(sha256_file_hex(temp_path("sha256-empty.bin")), sha256_hex(""));
  try {
    sha256_file_hex(temp_path("no-such-file"));
    FAIL() << "a missing file was hashed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-file: cannot open"), std::string::npos);
  }
}

TEST(RunFile, RoundTripKeepsEverything) {
  const RunFile run = small_run();
  const std::string path = temp_path("roundtrip.slrun");
  save_run_file(run, path);
  const RunFile back = load_run_file(path);
  EXPECT_EQ(back.meta.classes, 3);
  EXPECT_EQ(back.meta.world_size, 2);
  EXPECT_EQ(back.meta.class_names, run.meta.class_names);
  EXPECT_EQ(back.meta.class_counts, run.meta.class_counts);
  EXPECT_EQ(back.meta.backend, "gloo");
  EXPECT_EQ(back.meta.batch_size, std::optional<int64_t>(2));
  EXPECT_TRUE(back.meta.complete);
  ASSERT_EQ(back.records.ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(back.records.ranks[r].size(), run.records.ranks[r].size());
    for (size_t i = 0; i < run.records.ranks[r].size(); ++i) {
      const Record& a = run.records.ranks[r][i];
      const Record& b = back.records.ranks[r][i];
      EXPECT_EQ(a.index, b.index);
      EXPECT_EQ(a.target, b.target);
      EXPECT_EQ(a.prediction, b.prediction);
      EXPECT_EQ(a.flags, b.flags);
    }
  }
  EXPECT_EQ(back.per_rank, run.per_rank);
  EXPECT_EQ(back.synced, run.synced);
  EXPECT_FALSE(back.expected.has_value());
  fs::remove(path);
}

TEST(RunFile, FloatMatricesSurvive) {
  RunFile run = small_run();
  run.synced.at(0, 0) = 0.5;                                      // e.g. normalize-then-sum
  run.synced.at(1, 1) = std::numeric_limits<double>::infinity();  // float16 overflow
  const RunFile back = parse_run_file(run_file_bytes(run), "float.slrun");
  EXPECT_EQ(back.synced.at(0, 0), 0.5);
  EXPECT_TRUE(std::isinf(back.synced.at(1, 1)));
}

// Counts a file cannot make the report lie with: refused at load, naming the
// member, the cell and what is wrong, whichever matrix holds them.
struct HostileCount {
  const char* name;
  double value;
  const char* says;
};

class HostileCounts : public ::testing::TestWithParam<HostileCount> {};

TEST_P(HostileCounts, AreRefusedNamingTheMemberAndCell) {
  for (const char* member : {"synced.npy", "rank0_matrix.npy"}) {
    RunFile run = small_run();
    Matrix& m = std::string(member) == "synced.npy" ? run.synced : run.per_rank[0];
    m.at(1, 0) = GetParam().value;
    expect_input_error(run_file_bytes(run), std::string("'") + member + "' holds");
    expect_input_error(run_file_bytes(run), "at row 1, column 0");
    expect_input_error(run_file_bytes(run), GetParam().says);
  }
}

INSTANTIATE_TEST_SUITE_P(Cells, HostileCounts,
                         ::testing::Values(HostileCount{"nan", std::nan(""), "NaN"},
                                           HostileCount{"minus_infinity", -HUGE_VAL, "an infinity"},
                                           HostileCount{"negative", -50, "-50"},
                                           HostileCount{"past_exact", 1e300, "passes 2^53"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RunFile, OverlongClassNameIsRefused) {
  RunFile run = small_run();
  expect_input_error(edit_meta(run_file_bytes(run),
                               [](auto& j) { j["class_names"][1] = std::string(100000, 'x'); }),
                     "class name 1 has 100000 bytes");
}

TEST(RunFile, SyncNoteIsOptionalAndKept) {
  RunFile run = small_run();
  EXPECT_EQ(parse_run_file(run_file_bytes(run), "plain.slrun").meta.sync_note, "");
  run.meta.sync_note = "summed in rank order";
  EXPECT_EQ(parse_run_file(run_file_bytes(run), "note.slrun").meta.sync_note,
            "summed in rank order");
  expect_input_error(edit_meta(run_file_bytes(run), [](auto& j) { j["sync_note"] = 3; }),
                     "sync_note");
}

TEST(RunFile, IncompleteRunWithoutSync) {
  RunFile run = small_run();
  run.meta.complete = false;
  run.meta.incomplete_reason = "rank 1 failed: connection closed";
  run.meta.failed_ranks = {1};
  run.records.ranks[1].clear();
  run.per_rank[1] = Matrix(3);
  run.synced = Matrix();
  const RunFile back = parse_run_file(run_file_bytes(run), "partial.slrun");
  EXPECT_FALSE(back.meta.complete);
  EXPECT_FALSE(back.has_synced());
  EXPECT_EQ(back.meta.failed_ranks, std::vector<int>{1});
  // The views still open it: per-rank data, no synced matrix, one finding saying why.
  const Evaluation e = evaluation_from_run(back, "partial.slrun");
  EXPECT_NE(e.synced_missing.find("rank 1 failed: connection closed"), std::string::npos);
  // Only the first cause: the ranks that failed because of it are in the banner.
  RunFile cascade = back;
  cascade.meta.incomplete_reason += "; rank 0 exited with status 1 (all_gather failed)";
  const std::string shown = evaluation_from_run(cascade, "partial.slrun").synced_missing;
  EXPECT_EQ(shown.find("rank 0 exited"), std::string::npos) << shown;
  EXPECT_NE(shown.find("rank 1 failed: connection closed; …"), std::string::npos) << shown;
  EXPECT_EQ(e.per_rank, back.per_rank);
  EXPECT_EQ(e.meta.failed_ranks, std::vector<int>{1});
  EXPECT_FALSE(e.synced.has_value());
  EXPECT_FALSE(e.diagnosis.correct);
  EXPECT_TRUE(e.diagnosis.mismatched_rows.empty());
  ASSERT_EQ(e.diagnosis.findings.size(), 1u);
  EXPECT_EQ(e.diagnosis.findings[0].pattern, Pattern::IncompleteRun);
  EXPECT_NE(describe(e.diagnosis.findings[0]).explanation.find("rank 1 failed"), std::string::npos);
  EXPECT_EQ(e.diagnosis.evaluated_records, int64_t(back.records.ranks[0].size()));
  EXPECT_EQ(e.diagnosis.distinct_evaluated + e.diagnosis.missing_samples, back.meta.dataset_size);
}

TEST(RunFile, SaveRejectsInconsistentRun) {
  RunFile run = small_run();
  run.records.ranks[0][0].target = 7;
  EXPECT_THROW(run_file_bytes(run), InputError);
  run = small_run();
  run.per_rank.pop_back();
  EXPECT_THROW(run_file_bytes(run), InputError);
  run = small_run();
  run.synced = Matrix();  // complete runs need the synced matrix
  EXPECT_THROW(run_file_bytes(run), InputError);
}

TEST(RunFile, RejectsGarbage) {
  expect_input_error("", "");
  expect_input_error("this is not a zip archive at all", "");
}

namespace {

// Where a good run file is cut, from its size.
struct TruncationCase {
  std::string name;
  std::function<size_t(size_t)> cut;
};

void PrintTo(const TruncationCase& c, std::ostream* os) {
  *os << c.name;
}

class RunFileTruncated : public testing::TestWithParam<TruncationCase> {};

}  // namespace

TEST_P(RunFileTruncated, IsRejected) {
  const std::string good = run_file_bytes(small_run());
  expect_input_error(good.substr(0, GetParam().cut(good.size())), "");
}

INSTANTIATE_TEST_SUITE_P(
    RunFile, RunFileTruncated,
    testing::Values(TruncationCase{"AfterTenBytes", [](size_t) { return size_t(10); }},
                    TruncationCase{"InTheMiddle", [](size_t size) { return size / 2; }},
                    TruncationCase{"FiveBytesShort", [](size_t size) { return size - 5; }}),
    shardlens::test::NamedRow{});

TEST(RunFile, RejectsDamagedMembers) {
  const std::string good = run_file_bytes(small_run());
  // A member replaced after writing, meta.json untouched: the checksum catches it.
  expect_input_error(repack(
                         good, [](auto& m) { m["synced.npy"] = m["rank0_matrix.npy"]; }, false),
                     "checksum");
  expect_input_error(repack(good, [](auto& m) { m.erase("meta.json"); }), "meta.json");
  expect_input_error(repack(
                         good, [](auto& m) { m["meta.json"] = "{not json"; }, false),
                     "not valid JSON");
  expect_input_error(repack(good, [](auto& m) { m.erase("rank1_flags.npy"); }), "rank1_flags");
  expect_input_error(repack(good, [](auto& m) { m["extra.npy"] = m["synced.npy"]; }),
                     "unexpected member");
  expect_input_error(repack(good,
                            [](auto& m) {
                              m["rank0_target.npy"] = npy_bytes(std::vector<int32_t>{0, 1}, {2});
                            }),
                     "different lengths");
  expect_input_error(repack(good,
                            [](auto& m) {
                              m["rank0_matrix.npy"] = npy_bytes(std::vector<int64_t>(4, 0), {2, 2});
                            }),
                     "3 x 3");
  expect_input_error(
      repack(good,
             [](auto& m) {
               m["rank0_prediction.npy"] = npy_bytes(std::vector<int32_t>{0, 1, 9, 1}, {4});
             }),
      "prediction 9");
  expect_input_error(
      repack(good,
             [](auto& m) {
               m["rank0_index.npy"] = npy_bytes(std::vector<int64_t>{0, 2, 4, 70}, {4});
             }),
      "dataset index 70");
  expect_input_error(
      repack(good,
             [](auto& m) {
               m["rank0_index.npy"] = npy_bytes(std::vector<double>{0, 2, 4, 6}, {4});
             }),
      "rank0_index");
}

TEST(RunFile, RejectsBadMeta) {
  const std::string good = run_file_bytes(small_run());
  expect_input_error(edit_meta(good, [](auto& j) { j["format"] = "other"; }),
                     "not a ShardLens run");
  expect_input_error(edit_meta(good, [](auto& j) { j["format_version"] = 99; }), "newer");
  // A file may not call its synced matrix anything but what it can be.
  expect_input_error(edit_meta(good, [](auto& j) { j["synced_origin"] = "exact"; }),
                     "synced_origin 'exact' is none of simulated, recorded or sum-of-ranks");
  expect_input_error(edit_meta(good, [](auto& j) { j.erase("world_size"); }), "world_size");
  expect_input_error(edit_meta(good, [](auto& j) { j["world_size"] = "two"; }), "world_size");
  expect_input_error(edit_meta(good, [](auto& j) { j["world_size"] = 3; }), "rank2_index");
  expect_input_error(edit_meta(good, [](auto& j) { j["classes"] = 1000000000; }), "classes");
  expect_input_error(edit_meta(good, [](auto& j) { j["classes"] = 4; }), "4 classes");
  expect_input_error(edit_meta(good, [](auto& j) { j["class_counts"] = {1, 2}; }), "class counts");
  expect_input_error(edit_meta(good, [](auto& j) { j["class_names"] = {"a"}; }), "class names");
  expect_input_error(edit_meta(good,
                               [](auto& j) {
                                 j["records_per_rank"] = {4, 5};
                               }),
                     "meta.json says");
  expect_input_error(edit_meta(good, [](auto& j) { j["complete"] = "yes"; }), "complete");
  expect_input_error(edit_meta(good,
                               [](auto& j) {
                                 j["scenario"] = {{"no_such_key", 1}};
                               }),
                     "scenario");
  expect_input_error(edit_meta(good, [](auto& j) { j = nlohmann::json::array(); }), "object");
}

TEST(RunFile, SimulatedEvaluationRoundTripAndDiagnosis) {
  Scenario s;
  s.dataset = "synthetic:classes=4,per-class=5";
  s.predictor = "noisy:accuracy=0.8,seed=3";
  s.sampler.world_size = 3;  // 20 % 3 != 0: padding duplicates
  s.loader.batch_size = 2;
  const Evaluation e = simulate(s);
  const RunFile run = run_from_evaluation(e);
  EXPECT_EQ(run.meta.world_size, 3);
  EXPECT_EQ(run.meta.dataset_size, 20);
  EXPECT_EQ(run.per_rank, matrices_from_records(run.records, 4, -1));
  const RunFile back = parse_run_file(run_file_bytes(run), "sim.slrun");
  ASSERT_TRUE(back.meta.scenario.has_value());
  EXPECT_EQ(back.meta.scenario->sampler.world_size, 3);
  ASSERT_TRUE(back.expected.has_value());
  EXPECT_EQ(back.expected, e.expected);
  EXPECT_EQ(back.synced, *e.synced);
  const Diagnosis d = evaluation_from_run(back, "run").diagnosis;
  EXPECT_EQ(d.correct, e.diagnosis.correct);
  EXPECT_EQ(d.findings.size(), e.diagnosis.findings.size());
  EXPECT_FALSE(d.correct);
}

// numpy.load under Debian's python must open a run file (docs/ARCHITECTURE.md: a run file is a
// valid NumPy .npz).
TEST(RunFile, NumpyLoadsIt) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "numpy is not installed for /usr/bin/python3";
  const std::string path = temp_path("numpy.slrun");
  save_run_file(small_run(), path);
  const std::string script = temp_path("numpy_check.py");
  std::ofstream(script) << R"(import sys, json, hashlib, numpy as np, zipfile
z = np.load(sys.argv[1])
meta = json.loads(bytes(z["meta.json"]).decode())
assert meta["format"] == "shardlens-run", meta
assert meta["world_size"] == 2 and meta["classes"] == 3
assert z["rank0_index"].tolist() == [0, 2, 4, 6]
assert z["rank1_flags"].tolist() == [0, 0, 0, 1]
assert z["rank1_prediction"].tolist() == [0, 2, 2, 0]
assert z["synced"].shape == (3, 3) and int(z["synced"].sum()) == 8
assert z["synced"].dtype == np.int64
zf = zipfile.ZipFile(sys.argv[1])
for name, info in meta["members"].items():
    assert hashlib.sha256(zf.read(name)).hexdigest() == info["sha256"], name
print("ok")
)";
  const std::string cmd = "/usr/bin/python3 " + script + " " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  fs::remove(path);
  fs::remove(script);
}

// The torch a run imitated: its scenario's when it recorded one (a real run's is the LibTorch
// that ran it, or --torch-version), else the version it recorded (an import), else the
// default when that text is empty or odd.
TEST(RunFile, RecordedTorchVersionChoosesTheSemantics) {
  RunFile run = shardlens::test::small_run();
  run.meta.torch_version = "2.15.0+cu130";
  EXPECT_EQ(evaluation_from_run(run, "r.slrun").scenario().sampler.torch.to_string(), "2.15");
  run.meta.torch_version = "1.13.1";
  EXPECT_EQ(evaluation_from_run(run, "r.slrun").scenario().sampler.torch.to_string(), "1.13");
  run.meta.torch_version = "unknown";
  EXPECT_EQ(evaluation_from_run(run, "r.slrun").scenario().sampler.torch, TorchVersion{});
  Scenario s;
  s.sampler.torch = TorchVersion::parse("2.7");
  run.meta.scenario = s;
  run.meta.torch_version = "1.13.0";
  EXPECT_EQ(evaluation_from_run(run, "r.slrun").scenario().sampler.torch.to_string(), "2.7");
}

// --- A file cannot make the report lie: what the records prove is checked at load ----------

namespace {

// small_run() with the expected matrix its records prove: every index 0..6 evaluated once
// outside rank 1's padding repeat of index 0, so one count per index at (target, prediction):
// 0 -> (0,0), 1 -> (0,0), 2 -> (1,1), 3 -> (1,2), 4 -> (2,2), 5 -> (2,2), 6 -> (0,1).
RunFile small_run_with_expected() {
  RunFile run = small_run();
  Matrix expected(3);
  expected.cells = {2, 1, 0, 0, 1, 1, 0, 0, 2};
  run.expected = expected;
  return run;
}

std::string int_matrix(const std::vector<int64_t>& cells) {
  return npy_bytes(cells, {3, 3});
}

// The message of the InputError parse_run_file throws for `bytes`, or "" when it loads.
std::string load_error(const std::string& bytes) {
  try {
    parse_run_file(bytes, "doctored.slrun");
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

void expect_refused(const std::string& bytes, const std::vector<std::string>& needles) {
  const std::string what = load_error(bytes);
  ASSERT_FALSE(what.empty()) << "a doctored run file loaded";
  EXPECT_EQ(what.rfind("doctored.slrun: ", 0), 0u) << what;
  for (const std::string& needle : needles)
    EXPECT_NE(what.find(needle), std::string::npos) << "no '" << needle << "' in: " << what;
}

}  // namespace

TEST(RunFileRecords, HonestFileWithExpectedLoadsAndIsDiagnosedWrong) {
  const std::string bytes = run_file_bytes(small_run_with_expected());
  ASSERT_EQ(load_error(bytes), "");
  const Evaluation e = evaluation_from_run(parse_run_file(bytes, "honest.slrun"), "honest.slrun");
  // The padding repeat of index 0 puts 4 in row 0 of the synced matrix, whose class has 3.
  EXPECT_FALSE(e.diagnosis.correct);
  EXPECT_EQ(e.diagnosis.mismatched_rows, std::vector<int32_t>{0});
}

// A file with the stored expected matrix doctored to equal the wrong synced one.
TEST(RunFileRecords, ExpectedEqualToAWrongSyncedIsRefused) {
  const std::string bytes = repack(run_file_bytes(small_run_with_expected()),
                                   [](auto& m) { m["expected.npy"] = m.at("synced.npy"); });
  // Synced row 0 is 3 + 1 + 0 = 4 (index 0 counted twice); class 0 has 3 samples.
  expect_refused(bytes, {"member expected.npy", "row 0 sums to 4", "class 0 3 samples"});
}

// Rows that balance can still contradict the records: index 6 is class 0 predicted as 1.
TEST(RunFileRecords, ExpectedBelowTheRecordsIsRefused) {
  const std::string bytes = repack(run_file_bytes(small_run_with_expected()), [](auto& m) {
    m["expected.npy"] = int_matrix({3, 0, 0, 0, 1, 1, 0, 0, 2});
  });
  expect_refused(bytes, {"member expected.npy", "holds 0 at row 0, column 1",
                         "1 distinct sample of class 0 predicted as 1"});
}

TEST(RunFileRecords, ExpectedRowsNotSummingToTheClassCountsAreRefused) {
  // One count moved from row 0 to row 1: the total is still the dataset's 7.
  const std::string bytes = repack(run_file_bytes(small_run_with_expected()), [](auto& m) {
    m["expected.npy"] = int_matrix({2, 0, 0, 0, 2, 1, 0, 0, 2});
  });
  expect_refused(bytes, {"member expected.npy", "row 0 sums to 2", "class 0 3 samples"});
}

TEST(RunFileRecords, ExpectedNotCountingTheDatasetIsRefused) {
  // Rows that match estimated class counts, but 8 samples in a dataset of 7.
  std::string bytes = edit_meta(run_file_bytes(small_run_with_expected()), [](auto& meta) {
    meta["class_counts"] = {4, 2, 2};
    meta["class_counts_source"] = "distinct-records";
  });
  bytes = repack(bytes, [](auto& m) {
    m["expected.npy"] = int_matrix({3, 1, 0, 0, 1, 1, 0, 0, 2});
  });
  expect_refused(bytes, {"member expected.npy counts 8 samples", "'dataset_size' is 7"});
}

TEST(RunFileRecords, FractionalExpectedIsRefused) {
  Matrix half(3);
  half.cells = {1.5, 1.5, 0, 0, 1, 1, 0, 0, 2};
  const std::string bytes = repack(run_file_bytes(small_run_with_expected()), [&](auto& m) {
    m["expected.npy"] = npy_bytes(half.cells, {3, 3});
  });
  expect_refused(bytes,
                 {"'expected.npy' holds 1.5 at row 0, column 0: counts must be whole numbers",
                  "whole numbers"});
}

TEST(RunFileRecords, RankMatrixPlus100IsRefused) {
  // Rank 1 evaluated index 1 and (padding) index 0, both class 0 predicted as 0.
  const std::string bytes = repack(run_file_bytes(small_run()), [](auto& m) {
    m["rank1_matrix.npy"] = int_matrix({102, 0, 0, 0, 0, 1, 0, 0, 1});
  });
  expect_refused(bytes, {"member rank1_matrix.npy holds 102 at row 0, column 0",
                         "rank 1's records hold 2 samples of class 0 predicted as 0"});
}

TEST(RunFileRecords, RankMatrixMissingACountIsRefused) {
  // Rank 0: (0,0), (1,1), (2,2), (0,1); its (2,2) emptied.
  const std::string bytes = repack(run_file_bytes(small_run()), [](auto& m) {
    m["rank0_matrix.npy"] = int_matrix({1, 1, 0, 0, 1, 0, 0, 0, 0});
  });
  expect_refused(bytes, {"member rank0_matrix.npy holds 0 at row 2, column 2",
                         "rank 0's records hold 1 sample of class 2 predicted as 2"});
}

// Class counts below what the records show: the dataset's (summing to the dataset size) and
// an estimate's.
TEST(RunFileRecords, ClassCountsBelowTheRecordsAreRefused) {
  const std::string honest = run_file_bytes(small_run());
  // Indices 0, 1 and 6 are class 0.
  expect_refused(edit_meta(honest,
                           [](auto& meta) {
                             meta["class_counts"] = {2, 3, 2};
                           }),
                 {"meta.json: 'class_counts' gives class 0 2 samples",
                  "the records evaluate 3 distinct samples of it"});
  expect_refused(edit_meta(honest,
                           [](auto& meta) {
                             meta["class_counts"] = {3, 1, 2};
                             meta["class_counts_source"] = "distinct-records";
                           }),
                 {"'class_counts' gives class 1 1 sample", "2 distinct samples of it"});
}

// A dump may give its rank's own matrix (its counter's, not the records'): an import lists
// those ranks, and the others are still checked. An import written before the list existed
// may have given any.
TEST(RunFileRecords, ProvidedRankMatricesAreNotCountedFromTheRecords) {
  const auto doctored = [](const std::string& bytes) {
    return repack(bytes, [](auto& m) {
      m["rank0_matrix.npy"] = int_matrix({1, 1, 0, 0, 1, 0, 0, 0, 7});
    });
  };
  const std::string honest = run_file_bytes(small_run());
  const std::string imported = edit_meta(honest, [](auto& meta) {
    meta["source"] = "imported";
    meta["backend"] = "import";
  });
  EXPECT_EQ(
      load_error(doctored(edit_meta(
          imported, [](auto& meta) { meta["provided_matrices"] = nlohmann::json::array({0}); }))),
      "");
  EXPECT_EQ(load_error(doctored(imported)), "");  // written before the list
  expect_refused(
      doctored(edit_meta(
          imported, [](auto& meta) { meta["provided_matrices"] = nlohmann::json::array({1}); })),
      {"member rank0_matrix.npy holds 7 at row 2, column 2"});
  expect_refused(
      doctored(edit_meta(imported,
                         [](auto& meta) { meta["provided_matrices"] = nlohmann::json::array(); })),
      {"member rank0_matrix.npy"});
  // Only ranks of the run.
  expect_refused(
      edit_meta(imported,
                [](auto& meta) { meta["provided_matrices"] = nlohmann::json::array({2}); }),
      {"provided_matrices: rank 2 out of range"});
  // And the list survives a save: what an import wrote is what a reader sees.
  RunFile run = small_run();
  run.meta.source = "imported";
  run.meta.provided_matrices = std::vector<int>{1};
  EXPECT_EQ(parse_run_file(run_file_bytes(run), "r.slrun").meta.provided_matrices,
            std::optional<std::vector<int>>(std::vector<int>{1}));
}

// A float16 counter (the counter-precision lesson): exact up to 2048, and never below 2048
// past it; the lesson's own stalled matrices load.
TEST(RunFileRecords, Float16CountersAreCheckedAsTheyRound) {
  const Evaluation sim = simulate(load_preset("counter-precision"));
  ASSERT_EQ(sim.scenario().dtype, CounterDtype::Float16);
  const std::string honest = run_file_bytes(run_from_evaluation(sim));
  ASSERT_EQ(load_error(honest), "");
  // Each rank evaluates 10,000 samples of each class, all predicted right (a perfect model).
  const auto with_rank0 = [&](double diagonal, double off) {
    std::vector<double> cells = {diagonal, off, 0, 0, 2048, 0, 0, 0, 2048};
    return repack(honest, [&](auto& m) { m["rank0_matrix.npy"] = npy_bytes(cells, {3, 3}); });
  };
  EXPECT_EQ(load_error(with_rank0(2048, 0)), "");  // stalled
  EXPECT_EQ(load_error(with_rank0(4096, 0)), "");  // a float16 value past the stall
  expect_refused(with_rank0(2047, 0), {"member rank0_matrix.npy holds 2047 at row 0, column 0",
                                       "float16 counter keeps at 2048 or more"});
  expect_refused(with_rank0(2049, 0), {"holds 2049 at row 0, column 0"});  // not a float16
  expect_refused(with_rank0(2048, 1), {"holds 1 at row 0, column 1",
                                       "0 samples of class 0 predicted as 1", "exact up to 2048"});
}

// Whatever a file or a caller gives, no report says "equals the expected one" over a row
// that misses its class count (here the run is opened without the load's checks).
TEST(RunFileRecords, ReportNeverCallsAWrongRowCorrect) {
  RunFile run = small_run();
  run.expected = run.synced;  // row 0: 4, class 0: 3
  const Evaluation e = evaluation_from_run(run, "doctored.slrun");
  EXPECT_FALSE(e.diagnosis.correct);
  EXPECT_EQ(e.diagnosis.mismatched_rows, std::vector<int32_t>{0});
  const std::string text = report_text(e);
  EXPECT_EQ(text.find("equals the expected one"), std::string::npos) << text;
  EXPECT_NE(text.find("WRONG"), std::string::npos) << text;
}

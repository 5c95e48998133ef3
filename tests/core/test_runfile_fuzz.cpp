// Run-file findings of fuzz/fuzz_runfile: damaged meta.json values that crashed the reader
// or escaped as something other than an InputError naming the file.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/io/files.h"
#include "core/io/npz.h"
#include "core/runfile/runfile.h"
#include "core/vocabulary/types.h"
#include "test_io_util.h"

using namespace shardlens;

namespace {

// One rank, two classes, two records.
RunFile tiny_run() {
  RunFile run;
  run.meta.classes = 2;
  run.meta.class_counts = {1, 1};
  run.meta.dataset_size = 2;
  run.meta.world_size = 1;
  run.records.ranks = {{{0, 0, 0, 0}, {1, 1, 0, 0}}};
  run.per_rank = matrices_from_records(run.records, 2, -1);
  run.synced = run.per_rank[0];
  return run;
}

// The run file's bytes after `edit` changed meta.json (which no checksum covers).
std::string with_meta(const std::function<void(nlohmann::json&)>& edit) {
  auto members = run_file_members(tiny_run());
  for (auto& [name, data] : members) {
    if (name != "meta.json") continue;
    auto meta = nlohmann::json::parse(data);
    edit(meta);
    data = meta.dump();
  }
  io_test::TempDir dir;
  write_npz(dir.path("run.slrun"), members);
  return read_file_bytes(dir.path("run.slrun"));
}

}  // namespace

TEST(RunFileFuzz, TinyRunLoads) {
  EXPECT_EQ(parse_run_file(with_meta([](auto&) {}), "ok.slrun").meta.classes, 2);
}

// Two counts near INT64_MAX overflowed the sum in validate_run (undefined behaviour).
TEST(RunFileFuzz, ClassCountsWhoseSumOverflows) {
  const std::string bytes = with_meta([](nlohmann::json& m) {
    m["class_counts"] = {INT64_MAX, INT64_MAX};
    m["class_counts_source"] = "distinct-records";
  });
  EXPECT_INPUT_ERROR(parse_run_file(bytes, "bad.slrun"), "bad.slrun",
                     "class counts add up to more than 2^63 - 1");
}

// The embedded scenario's errors named a command-line flag, not the file; a float where an
// int belongs was converted with undefined behaviour.
TEST(RunFileFuzz, ScenarioErrorsNameTheFile) {
  auto with_scenario = [](nlohmann::json scenario) {
    return with_meta([&](nlohmann::json& m) { m["scenario"] = scenario; });
  };
  EXPECT_INPUT_ERROR(parse_run_file(with_scenario({{"sync", "twice"}}), "bad.slrun"),
                     "bad.slrun: meta.json scenario: sync: ", "twice");
  EXPECT_INPUT_ERROR(parse_run_file(with_scenario({{"world_size", 1e300}}), "bad.slrun"),
                     "bad.slrun: meta.json scenario",
                     "'world_size' must be an integer (is 1e+300)");
  EXPECT_INPUT_ERROR(parse_run_file(with_scenario({{"sanity_steps", 1LL << 40}}), "bad.slrun"),
                     "bad.slrun: meta.json scenario",
                     "'sanity_steps' must be an integer in [0, 2147483647]");
}

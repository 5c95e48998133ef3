// The hard caps of core/vocabulary/limits.h: spec parsing, labels, the sampler, run files and
// imports accept exactly the same values, so what one part takes the next can store.
//
// A run at the class cap itself is not built here: one 32768 x 32768 matrix is 8 GiB, and a
// simulation holds W + 2 of them. The tests check the boundary (cap accepted, cap + 1
// rejected) in every parser instead, and that saving refuses a run too large to be read back
// before allocating anything for it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/dataset/labels.h"
#include "core/io/files.h"
#include "core/io/npz.h"
#include "core/runfile/import.h"
#include "core/runfile/runfile.h"
#include "core/sim/specs.h"
#include "core/torchsem/sampler.h"
#include "core/vocabulary/limits.h"
#include "tests/common/small_run.h"
#include "tests/core/test_io_util.h"

using namespace shardlens;
using shardlens::io_test::input_error_of;
using shardlens::io_test::TempDir;

namespace {

const std::string kCap = std::to_string(kMaxClasses);
const std::string kPastCap = std::to_string(kMaxClasses + 1);

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// small_run() with meta.json claiming `classes`, as bytes of a run file.
std::string run_bytes_claiming(int64_t classes) {
  auto members = run_file_members(test::small_run());
  for (auto& [name, bytes] : members) {
    if (name != "meta.json") continue;  // the checksums cover the other members only
    auto meta = nlohmann::json::parse(bytes);
    meta["classes"] = classes;
    bytes = meta.dump();
  }
  TempDir dir;
  write_npz(dir.path("claim.slrun"), members);
  return read_file_bytes(dir.path("claim.slrun"));
}

RankDump one_record_dump() {
  RankDump d;
  d.origin = "rank0.npz";
  d.ranks = {0};
  d.records = {Record{0, 0, 0, 0}};
  d.world_size = 1;
  return d;
}

}  // namespace

TEST(Limits, SyntheticDatasetSpecTakesTheClassCap) {
  const Labels at_cap = load_labels("synthetic:classes=" + kCap + ",per-class=1");
  EXPECT_EQ(at_cap.num_classes, kMaxClasses);
  EXPECT_TRUE(contains(
      input_error_of([] { load_labels("synthetic:classes=" + kPastCap + ",per-class=1"); }),
      "[1, " + kCap + "]"));
  // counts=... lists one class per entry: the same cap.
  std::string counts = "1";
  for (int32_t c = 1; c <= kMaxClasses; ++c) counts += ",1";
  EXPECT_TRUE(contains(input_error_of([&] { load_labels("synthetic:counts=" + counts); }),
                       "between 1 and " + kCap + " classes"));
}

TEST(Limits, LabelsInferTheClassCountUpToTheCap) {
  EXPECT_EQ(labels_from_values({0, int64_t(kMaxClasses) - 1}, 0, "labels").num_classes,
            kMaxClasses);
  EXPECT_TRUE(contains(input_error_of([] {
                         labels_from_values({0, int64_t(kMaxClasses)}, 0, "labels");
                       }),
                       "more than " + kCap + " classes"));
  EXPECT_TRUE(contains(input_error_of([] { labels_from_values({0}, kMaxClasses + 1, "labels"); }),
                       "more than the " + kCap + " supported"));
}

TEST(Limits, RunFileMetaTakesTheClassCap) {
  // At the cap the class count passes; what fails next is the run's own consistency.
  const std::string at_cap =
      input_error_of([] { parse_run_file(run_bytes_claiming(kMaxClasses), "f"); });
  EXPECT_FALSE(contains(at_cap, "'classes' must be")) << at_cap;
  EXPECT_TRUE(contains(at_cap, "class names for " + kCap + " classes")) << at_cap;
  const std::string past =
      input_error_of([] { parse_run_file(run_bytes_claiming(kMaxClasses + 1), "f"); });
  EXPECT_TRUE(
      contains(past, "'classes' must be an integer in [1, " + kCap + "] (is " + kPastCap + ")"))
      << past;
}

TEST(Limits, ImportTakesTheClassCap) {
  ImportOptions options;
  options.classes = kMaxClasses + 1;
  EXPECT_TRUE(contains(input_error_of([&] { import_dumps({one_record_dump()}, options); }),
                       "is out of range [1, " + kCap + "]"));
  // At the cap the import memory bound speaks instead (two 8 GiB matrices).
  options.classes = kMaxClasses;
  const std::string at_cap = input_error_of([&] { import_dumps({one_record_dump()}, options); });
  EXPECT_FALSE(contains(at_cap, "out of range")) << at_cap;
  EXPECT_TRUE(contains(at_cap, "MiB limit")) << at_cap;
}

TEST(Limits, SamplerTakesTheSimulatedWorldSizeCap) {
  SamplerConfig c;
  c.world_size = kMaxSimulatedWorldSize;
  EXPECT_EQ(int(sample(kMaxSimulatedWorldSize, c).size()), kMaxSimulatedWorldSize);
  c.world_size = kMaxSimulatedWorldSize + 1;
  EXPECT_TRUE(contains(input_error_of([&] { sample(10, c); }),
                       "(1 to " + std::to_string(kMaxSimulatedWorldSize) + ")"));
}

// A simulation at the class cap (W + 2 matrices of 8 GiB) is more than a run file may hold
// to be read back: saving says so, from the shapes, before building any member.
TEST(Limits, RunTooLargeToReadBackIsNotSaved) {
  RunFile run = test::small_run();
  run.meta.classes = kMaxClasses;
  run.meta.class_names.clear();
  for (Matrix* m : {&run.per_rank[0], &run.per_rank[1], &run.synced}) {
    m->classes = kMaxClasses;  // shapes only: no cells are allocated
    m->cells.clear();
  }
  const std::string what = input_error_of([&] { run_file_members(run); });
  EXPECT_TRUE(contains(what, "3 matrices of " + kCap + " x " + kCap)) << what;
  EXPECT_TRUE(contains(what, std::to_string(kMaxReadBytes >> 20) + " MiB")) << what;
}

// The vectors of scripts/oracles/modern_oracles.py (today's torch, Lightning, torchmetrics and
// Accelerate, from the project's venv: scripts/oracles/make_modern_vectors.sh) against the C++
// semantics. Read from $SHARDLENS_MODERN_VECTORS, else the committed
// tests/data/reference/modern/modern_oracles.json; a test skips, saying why, only when
// neither exists or the part was not run there. The oracle test oracle_modern_quick feeds it
// the --quick output of Debian's torch 1.13, frameworks.modern_torch_live that of the venv's
// torch drawn at test time. Lists longer than kQuickSize (randperm at n = 214,748,364) are
// checked only with SHARDLENS_FULL_SIZE=1 (the ctest modern.full_size, label torch-full).
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "core/torchsem/accelerate_sampler.h"
#include "core/torchsem/loader.h"
#include "core/torchsem/randperm.h"
#include "core/torchsem/sampler.h"
#include "core/torchsem/sync.h"
#include "core/vocabulary/records.h"
#include "tests/common/test_rows.h"

using namespace shardlens;
using nlohmann::json;

namespace {

constexpr int64_t kQuickSize = 20'000'000;
constexpr int64_t kEdge = 1000;

std::string vectors_path() {
  if (const char* env = std::getenv("SHARDLENS_MODERN_VECTORS")) return env;
  return SHARDLENS_TEST_DATA_DIR "/reference/modern/modern_oracles.json";
}

bool full_size() {
  const char* env = std::getenv("SHARDLENS_FULL_SIZE");
  return env && std::string(env) == "1";
}

// The vectors, or why there are none (the test then skips with that reason). Read once,
// maybe while the rows are made (before main); a file that is not JSON fails every test
// that reads it.
const json& vectors(std::string& why) {
  static std::string reason;
  static std::string parse_error;
  static const json doc = [] {
    const std::string path = vectors_path();
    std::ifstream in(path);
    if (!in) {
      reason = path +
               " does not exist: run scripts/oracles/make_modern_vectors.sh (the venv's "
               "frameworks) and commit it";
      return json();
    }
    try {
      return json::parse(in);
    } catch (const std::exception& e) {
      parse_error = path + ": not JSON (" + e.what() + ")";
      reason = path + " is not JSON";
      return json();
    }
  }();
  if (!parse_error.empty() && ::testing::UnitTest::GetInstance()->current_test_info())
    ADD_FAILURE() << parse_error;
  why = reason;
  return doc;
}

// The part's data, or null with the reason it is absent.
const json* part(const char* name, std::string& why) {
  const json& doc = vectors(why);
  if (doc.is_null()) return nullptr;
  const json& parts = doc.at("parts");
  if (!parts.contains(name) || parts[name].value("status", "") != "ok") {
    why = std::string("the vectors have no '") + name + "' part (" +
          (parts.contains(name) ? parts[name].value("reason", parts[name].dump()) : "not run") +
          ")";
    return nullptr;
  }
  return &doc.at(name);
}

TorchVersion torch_of_vectors() {
  std::string why;
  return TorchVersion::parse(vectors(why).at("torch_version").get<std::string>());
}

// count, sum((i + 1) * v[i]) as a decimal string, first and last kEdge values: what
// modern_oracles.py's summary() keeps of a long list.
struct Summary {
  int64_t count = 0;
  unsigned __int128 weighted = 0;
  std::vector<int64_t> first;
  std::deque<int64_t> last;
  void add(int64_t v) {
    ++count;
    weighted += static_cast<unsigned __int128>(count) * static_cast<unsigned __int128>(v);
    if (int64_t(first.size()) < kEdge) first.push_back(v);
    last.push_back(v);
    if (int64_t(last.size()) > kEdge) last.pop_front();
  }
  std::string weighted_sum() const {
    if (weighted == 0) return "0";
    std::string digits;
    for (unsigned __int128 w = weighted; w > 0; w /= 10)
      digits.insert(digits.begin(), char('0' + int(w % 10)));
    return digits;
  }
};

void expect_summary(const Summary& got, const json& want, const std::string& where) {
  EXPECT_EQ(got.count, want.at("count").get<int64_t>()) << where;
  EXPECT_EQ(got.weighted_sum(), want.at("weighted_sum").get<std::string>()) << where;
  EXPECT_EQ(got.first, want.at("first").get<std::vector<int64_t>>()) << where;
  EXPECT_EQ(std::vector<int64_t>(got.last.begin(), got.last.end()),
            want.at("last").get<std::vector<int64_t>>())
      << where;
}

SamplerConfig distributed(const json& v, TorchVersion torch) {
  SamplerConfig c;
  c.kind = SamplerKind::Distributed;
  c.world_size = v.at("world_size").get<int>();
  c.shuffle = v.at("shuffle").get<bool>();
  c.seed = v.at("seed").get<int64_t>();
  c.epoch = v.at("epoch").get<int64_t>();
  c.drop_last = v.at("drop_last").get<bool>();
  c.torch = torch;
  return c;
}

}  // namespace

// torch.randperm on both sides of torch >= 2.7's branch (n = 214,748,363 / 214,748,364).
TEST(ModernVectors, Randperm) {
  std::string why;
  const json* cases = part("randperm", why);
  if (!cases) GTEST_SKIP() << why;
  const TorchVersion torch = torch_of_vectors();
  int checked = 0, big = 0;
  for (const json& v : *cases) {
    const int64_t n = v.at("n").get<int64_t>();
    if (n > kQuickSize && !full_size()) {
      ++big;
      continue;
    }
    const std::vector<uint32_t> perm = randperm(n, v.at("seed").get<int64_t>(), torch);
    Summary s;
    for (uint32_t p : perm) s.add(p);
    expect_summary(s, v,
                   "randperm n " + std::to_string(n) + " seed " + v.at("seed").dump() + " torch " +
                       torch.to_string());
    ++checked;
  }
  if (checked == 0)
    GTEST_SKIP() << big << " full-size cases: run with SHARDLENS_FULL_SIZE=1 (ctest -L slow)";
}

TEST(ModernVectors, DistributedSamplerShards) {
  std::string why;
  const json* p = part("distributed_sampler", why);
  if (!p) GTEST_SKIP() << why;
  const TorchVersion torch = torch_of_vectors();
  ASSERT_GE(p->at("cases").size(), 3u);
  for (const json& v : p->at("cases")) {
    const auto ranks = sample(v.at("n").get<int64_t>(), distributed(v, torch));
    const auto want = v.at("ranks").get<std::vector<std::vector<int64_t>>>();
    ASSERT_EQ(ranks.size(), want.size()) << v.dump().substr(0, 200);
    for (size_t r = 0; r < ranks.size(); ++r)
      EXPECT_EQ(ranks[r].indices(), want[r]) << "rank " << r << " of " << v.dump().substr(0, 120);
  }
}

TEST(ModernVectors, DistributedSamplerLargeShards) {
  std::string why;
  const json* p = part("distributed_sampler_large", why);
  if (!p) GTEST_SKIP() << why;
  const TorchVersion torch = torch_of_vectors();
  int checked = 0;
  for (const json& v : p->at("cases")) {
    const int64_t n = v.at("n").get<int64_t>();
    if (n > kQuickSize && !full_size()) continue;
    const auto ranks = sample(n, distributed(v, torch));
    const json& want = v.at("rank_summaries");
    ASSERT_EQ(ranks.size(), want.size());
    for (size_t r = 0; r < ranks.size(); ++r) {
      Summary s;
      for_each_element(ranks[r], [&](int64_t index, uint8_t) { s.add(index); });
      expect_summary(s, want[r], "n " + std::to_string(n) + " rank " + std::to_string(r));
    }
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "full-size cases only: run with SHARDLENS_FULL_SIZE=1";
}

// Accelerate's prepare'd loader, gather_for_metrics and gather, from real processes: one row
// per case, named by its settings; without the part, one row that skips saying why.
namespace {

struct AccelerateRow {
  std::string name;
  const json* vector;  // in vectors(), which lives to the end
  std::string why_absent;
};

// ctest lists a row by its name, not its bytes.
void PrintTo(const AccelerateRow& row, std::ostream* os) {
  *os << row.name;
}

std::vector<AccelerateRow> accelerate_rows() {
  std::string why;
  const json* p = part("accelerate", why);
  if (!p) return {{"PartAbsent", nullptr, why}};
  std::vector<AccelerateRow> rows;
  for (const json& v : p->at("cases")) {
    std::string name = "n" + v.at("n").dump() + "_world" + v.at("world_size").dump() + "_batch" +
                       v.at("batch_size").dump();
    if (v.at("split_batches").get<bool>()) name += "_split";
    if (v.at("even_batches").get<bool>()) name += "_even";
    rows.push_back({name, &v, ""});
  }
  return shardlens::test::with_unique_names(std::move(rows));
}

class ModernAccelerate : public ::testing::TestWithParam<AccelerateRow> {};

}  // namespace

TEST(ModernVectors, AccelerateCasesAreThere) {
  std::string why;
  const json* p = part("accelerate", why);
  if (!p) GTEST_SKIP() << why;
  ASSERT_GE(p->at("cases").size(), 5u);
}

TEST_P(ModernAccelerate, LayoutAndGathers) {
  if (!GetParam().vector) GTEST_SKIP() << GetParam().why_absent;
  const json& v = *GetParam().vector;
  SamplerConfig sampler;
  sampler.kind = SamplerKind::Accelerate;
  sampler.world_size = v.at("world_size").get<int>();
  sampler.split_batches = v.at("split_batches").get<bool>();
  sampler.even_batches = v.at("even_batches").get<bool>();
  LoaderConfig loader;
  loader.batch_size = v.at("batch_size").get<int64_t>();
  const int64_t n = v.at("n").get<int64_t>();
  const ShardPlan plan = plan_shards(n, sampler, loader);
  ASSERT_EQ(plan.world_size, sampler.world_size);
  std::vector<std::vector<int64_t>> flat(size_t(plan.world_size));
  for (int r = 0; r < plan.world_size; ++r) {
    flat[size_t(r)] = plan.sampler[size_t(r)].indices();
    std::vector<std::vector<int64_t>> batches;
    for (size_t i = 0; i < flat[size_t(r)].size(); i += size_t(plan.batch_size)) {
      const auto begin = flat[size_t(r)].begin() + std::ptrdiff_t(i);
      batches.emplace_back(begin, begin + std::ptrdiff_t(std::min(size_t(plan.batch_size),
                                                                  flat[size_t(r)].size() - i)));
    }
    EXPECT_EQ(batches, v.at("ranks")[size_t(r)].get<std::vector<std::vector<int64_t>>>())
        << "rank " << r;
  }
  EXPECT_EQ(v.at("gather_for_metrics").is_null(), !step_layout(plan).even());
  if (v.at("gather_for_metrics").is_null()) return;
  // gather: every step's batches, rank-major; gather_for_metrics: the same, trimmed.
  StoredRecords records;
  std::vector<int64_t> gathered;
  const size_t b = size_t(plan.batch_size);
  for (size_t start = 0; start < flat[0].size(); start += b) {
    for (const auto& rank : flat)
      for (size_t i = start; i < std::min(rank.size(), start + b); ++i) gathered.push_back(rank[i]);
  }
  EXPECT_EQ(gathered, v.at("gather").get<std::vector<int64_t>>());
  for (const auto& rank : flat) {
    std::vector<Record> rec;
    for (int64_t i : rank) rec.push_back({i, 0, 0, 0});
    records.ranks.push_back(rec);
  }
  std::vector<int64_t> kept;
  for (const Record& rec :
       gather_for_metrics_records(records, n, plan.batch_size, plan_exhausted(plan, loader)))
    kept.push_back(rec.index);
  EXPECT_EQ(kept, v.at("gather_for_metrics").get<std::vector<int64_t>>());
}

INSTANTIATE_TEST_SUITE_P(Vectors, ModernAccelerate, ::testing::ValuesIn(accelerate_rows()),
                         shardlens::test::NamedRow());

// A real Lightning DDP run: each rank's dump is the plan's shard of the epoch its sampler
// had (sanity check: the first num_sanity_val_steps batches), and the reported matrix
// (torchmetrics, synced) is the sum of every rank's own counts, padding duplicates included.
TEST(ModernVectors, LightningDumps) {
  std::string why;
  const json* p = part("lightning", why);
  if (!p) GTEST_SKIP() << why;
  const TorchVersion torch = torch_of_vectors();
  const json& cfg = p->at("config");
  const int64_t n = cfg.at("n").get<int64_t>();
  const int classes = cfg.at("classes").get<int>();
  const int world = cfg.at("devices").get<int>();
  std::map<std::tuple<std::string, bool, int64_t, int>, json> sampler_of;
  for (const json& m : p->at("sampler_epochs"))
    sampler_of[{m.at("loader").get<std::string>(), m.at("sanity").get<bool>(),
                m.at("trainer_epoch").get<int64_t>(), m.at("rank").get<int>()}] = m;
  // (loader, sanity, epoch) -> summed counts and the reported matrix of each rank.
  std::map<std::tuple<std::string, bool, int64_t>, std::vector<int64_t>> sums;
  std::map<std::tuple<std::string, bool, int64_t>, std::vector<std::vector<int64_t>>> reported;
  int regular = 0;
  for (const json& d : p->at("dumps")) {
    const std::string loader_name = d.at("loader").get<std::string>();
    const bool sanity = d.contains("sanity") && d.at("sanity").get<int64_t>() == 1;
    const int64_t epoch = d.at("epoch").get<int64_t>();
    const int rank = d.at("rank").get<int>();
    const std::string where = d.at("file").get<std::string>();
    ASSERT_EQ(d.at("world_size").get<int>(), world) << where;
    const auto key = std::make_tuple(loader_name, sanity, epoch, rank);
    ASSERT_TRUE(sampler_of.count(key)) << where << ": no sampler epoch recorded";
    const json& s = sampler_of[key];
    ASSERT_EQ(s.at("sampler").get<std::string>(), "DistributedSampler") << where;
    SamplerConfig sampler;
    sampler.world_size = world;
    sampler.shuffle = s.at("sampler_shuffle").get<bool>();
    sampler.seed = s.at("sampler_seed").get<int64_t>();
    sampler.epoch = s.at("sampler_epoch").get<int64_t>();
    sampler.torch = torch;
    LoaderConfig loader;
    loader.batch_size = cfg.at("val_batch_size").get<int64_t>();
    loader.limit = BatchLimit::parse(std::to_string(cfg.at("limit_val_batches").get<int>()));
    const ShardPlan plan = plan_shards(n, sampler, loader);
    const std::vector<int64_t> want =
        sanity ? plan.sampler[size_t(rank)]
                     .prefix(cfg.at("num_sanity_val_steps").get<int64_t>() * loader.batch_size)
                     .indices()
               : plan.evaluated[size_t(rank)].sequence.indices();
    EXPECT_EQ(d.at("index").get<std::vector<int64_t>>(), want) << where;
    auto& sum = sums[{loader_name, sanity, epoch}];
    sum.resize(size_t(classes) * size_t(classes));
    const auto target = d.at("target").get<std::vector<int64_t>>();
    const auto prediction = d.at("prediction").get<std::vector<int64_t>>();
    ASSERT_EQ(target.size(), prediction.size()) << where;
    for (size_t i = 0; i < target.size(); ++i) ++sum[size_t(target[i] * classes + prediction[i])];
    ASSERT_TRUE(d.contains("reported")) << where;
    std::vector<int64_t> flat;
    for (const auto& row : d.at("reported").get<std::vector<std::vector<double>>>())
      for (double x : row) flat.push_back(int64_t(x));
    reported[{loader_name, sanity, epoch}].push_back(flat);
    regular += sanity ? 0 : 1;
  }
  EXPECT_EQ(regular, 2 * world * cfg.at("max_epochs").get<int>());
  for (const auto& [key, sum] : sums) {
    for (const auto& r : reported[key])
      EXPECT_EQ(r, sum) << std::get<0>(key) << (std::get<1>(key) ? " sanity" : "") << " epoch "
                        << std::get<2>(key);
  }
}

#include "core/runs/runfile.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/sha256.h"
#include "core/model/limits.h"
#include "core/model/memory_budget.h"
#include "core/model/types.h"
#include "shardlens/config.h"

namespace shardlens {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw InputError(origin + ": " + what);
}

std::string rank_member(int rank, const char* what) {
  return "rank" + std::to_string(rank) + "_" + what + ".npy";
}

bool all_integral(const Matrix& m) {
  for (double v : m.cells) {
    if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) >= 9.2e18) return false;
  }
  return true;
}

std::string matrix_npy(const Matrix& m) {
  const std::vector<int64_t> shape = {m.classes, m.classes};
  if (all_integral(m)) {
    std::vector<int64_t> ints(m.cells.begin(), m.cells.end());
    return npy_bytes(ints, shape);
  }
  return npy_bytes(m.cells, shape);
}

json meta_json(const RunFile& run, const std::map<std::string, std::string>& members) {
  const RunMeta& m = run.meta;
  json j;
  j["format"] = kRunFormatName;
  j["format_version"] = m.format_version;
  j["created_by"] =
      m.created_by.empty() ? std::string("ShardLens ") + SHARDLENS_VERSION : m.created_by;
  j["source"] = m.source;
  j["backend"] = m.backend;
  j["torch_version"] = m.torch_version;
  j["scenario"] = m.scenario ? to_json(*m.scenario) : json(nullptr);
  j["classes"] = m.classes;
  j["class_names"] = m.class_names;
  j["class_counts"] = m.class_counts;
  j["class_counts_source"] = m.class_counts_source;
  j["dataset_size"] = m.dataset_size;
  j["world_size"] = m.world_size;
  j["batch_size"] = m.batch_size ? json(*m.batch_size) : json(nullptr);
  j["ignore_index"] = m.ignore_index;
  j["complete"] = m.complete;
  j["incomplete_reason"] = m.incomplete_reason;
  j["failed_ranks"] = m.failed_ranks;
  if (!m.sync_note.empty()) j["sync_note"] = m.sync_note;
  if (!m.dataset.empty()) j["dataset"] = m.dataset;
  if (!m.launcher.empty()) j["launcher"] = m.launcher;
  if (m.epoch) j["epoch"] = *m.epoch;
  if (!m.stage.empty()) j["stage"] = m.stage;
  if (m.validation_in_epoch) j["validation_in_epoch"] = *m.validation_in_epoch;
  if (m.dataloader_idx) j["dataloader_idx"] = *m.dataloader_idx;
  if (m.recorded) j["recorded_settings"] = json::parse(m.recorded->text);
  std::vector<int64_t> sizes;
  sizes.reserve(size_t(run.records.world_size()));
  for (int r = 0; r < run.records.world_size(); ++r) sizes.push_back(run.records.rank_size(r));
  j["records_per_rank"] = sizes;
  json sums = json::object();
  for (const auto& [name, bytes] : members) {
    sums[name] = {{"sha256", sha256_hex(bytes)}, {"bytes", bytes.size()}};
  }
  j["members"] = sums;
  return j;
}

// --- meta.json field readers: every wrong type names the field -----------------------------

const json& field(const json& j, const char* key, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end()) fail(origin, std::string("meta.json lacks '") + key + "'");
  return *it;
}

int64_t int_field(const json& j, const char* key, const std::string& origin, int64_t lo,
                  int64_t hi) {
  const json& v = field(j, key, origin);
  if (!v.is_number_integer())
    fail(origin, std::string("meta.json: '") + key + "' is not an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
    fail(origin, std::string("meta.json: '") + key + "' is out of range");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) {
    fail(origin, std::string("meta.json: '") + key + "' = " + std::to_string(x) +
                     " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return x;
}

std::string string_field(const json& j, const char* key, const std::string& origin) {
  const json& v = field(j, key, origin);
  if (!v.is_string()) fail(origin, std::string("meta.json: '") + key + "' is not a string");
  return v.get<std::string>();
}

bool bool_field(const json& j, const char* key, const std::string& origin) {
  const json& v = field(j, key, origin);
  if (!v.is_boolean()) fail(origin, std::string("meta.json: '") + key + "' is not true/false");
  return v.get<bool>();
}

std::vector<int64_t> int_list(const json& j, const char* key, const std::string& origin,
                              size_t max_len) {
  const json& v = field(j, key, origin);
  if (!v.is_array()) fail(origin, std::string("meta.json: '") + key + "' is not a list");
  if (v.size() > max_len) fail(origin, std::string("meta.json: '") + key + "' is too long");
  std::vector<int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer() ||
        (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT64_MAX)))
      fail(origin, std::string("meta.json: '") + key + "' holds a non-integer");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

RunMeta parse_meta(const json& j, const std::string& origin) {
  if (!j.is_object()) fail(origin, "meta.json is not a JSON object");
  if (string_field(j, "format", origin) != kRunFormatName)
    fail(origin, "meta.json: not a ShardLens run file (format is not 'shardlens-run')");
  RunMeta m;
  m.format_version = static_cast<int>(int_field(j, "format_version", origin, 1, 1 << 20));
  if (m.format_version > kRunFormatVersion) {
    fail(origin, "run file format version " + std::to_string(m.format_version) +
                     " is newer than this ShardLens supports (" +
                     std::to_string(kRunFormatVersion) + ")");
  }
  m.created_by = string_field(j, "created_by", origin);
  m.source = string_field(j, "source", origin);
  m.backend = string_field(j, "backend", origin);
  m.torch_version = string_field(j, "torch_version", origin);
  const json& sc = field(j, "scenario", origin);
  if (!sc.is_null()) m.scenario = scenario_from_json(sc, origin + ": meta.json scenario");
  m.classes = static_cast<int32_t>(int_field(j, "classes", origin, 1, kMaxClasses));
  m.world_size = static_cast<int>(int_field(j, "world_size", origin, 1, kMaxWorldSize));
  // Per-index state is allocated from it: bounded like every dataset.
  m.dataset_size = int_field(j, "dataset_size", origin, 0, kMaxSamples);
  const json& names = field(j, "class_names", origin);
  if (!names.is_array()) fail(origin, "meta.json: 'class_names' is not a list");
  for (const json& n : names) {
    if (!n.is_string()) fail(origin, "meta.json: 'class_names' holds a non-string");
    m.class_names.push_back(n.get<std::string>());
  }
  if (!m.class_names.empty() && m.class_names.size() != size_t(m.classes)) {
    fail(origin, "meta.json: " + std::to_string(m.class_names.size()) + " class names for " +
                     std::to_string(m.classes) + " classes");
  }
  m.class_counts = int_list(j, "class_counts", origin, kMaxClasses);
  m.class_counts_source = string_field(j, "class_counts_source", origin);
  const json& b = field(j, "batch_size", origin);
  if (!b.is_null()) m.batch_size = int_field(j, "batch_size", origin, 1, INT64_MAX);
  m.ignore_index = static_cast<int>(int_field(j, "ignore_index", origin, INT32_MIN, INT32_MAX));
  m.complete = bool_field(j, "complete", origin);
  m.incomplete_reason = string_field(j, "incomplete_reason", origin);
  for (int64_t r : int_list(j, "failed_ranks", origin, kMaxWorldSize)) {
    if (r < 0 || r >= m.world_size)
      fail(origin, "meta.json: failed rank " + std::to_string(r) + " out of range");
    m.failed_ranks.push_back(static_cast<int>(r));
  }
  if (j.contains("sync_note")) m.sync_note = string_field(j, "sync_note", origin);  // optional
  if (j.contains("dataset")) m.dataset = string_field(j, "dataset", origin);        // optional
  if (j.contains("launcher")) m.launcher = string_field(j, "launcher", origin);     // optional
  if (j.contains("epoch")) m.epoch = int_field(j, "epoch", origin, 0, INT64_MAX);   // optional
  if (j.contains("stage")) m.stage = string_field(j, "stage", origin);              // optional
  if (j.contains("validation_in_epoch"))
    m.validation_in_epoch = int_field(j, "validation_in_epoch", origin, 0, INT32_MAX);
  if (j.contains("dataloader_idx"))
    m.dataloader_idx = int_field(j, "dataloader_idx", origin, 0, INT32_MAX);
  if (j.contains("recorded_settings")) {
    const json& r = j["recorded_settings"];
    if (!r.is_object()) fail(origin, "meta.json: 'recorded_settings' is not an object");
    m.recorded = parse_recorded_settings(r.dump(), origin + ": meta.json");
  }
  return m;
}

std::vector<int64_t> read_vector(const std::map<std::string, std::string>& members,
                                 const std::string& name, const std::string& origin) {
  std::vector<int64_t> shape;
  auto values = npy_integers_from_bytes(members.at(name), origin + ": member " + name, &shape);
  if (shape.size() != 1) fail(origin, "member " + name + " is not a 1-D array");
  return values;
}

Matrix read_matrix(const std::map<std::string, std::string>& members, const std::string& name,
                   int32_t classes, const std::string& origin) {
  std::vector<int64_t> shape;
  auto values = npy_doubles_from_bytes(members.at(name), origin + ": member " + name, &shape);
  if (shape.size() != 2 || shape[0] != classes || shape[1] != classes) {
    fail(origin, "member " + name + " is not a " + std::to_string(classes) + " x " +
                     std::to_string(classes) + " matrix");
  }
  Matrix m;
  m.classes = classes;
  m.cells = std::move(values);
  return m;
}

// A run file that saves must load: what the members take is bounded by what a reader
// accepts (kMaxReadBytes), checked from the shapes before any member is built.
void check_readable_size(const RunFile& run) {
  const int32_t c = run.meta.classes;
  if (c < 1 || c > kMaxClasses) return;  // validate_run says what is wrong
  const uint64_t matrices =
      run.per_rank.size() + (run.has_synced() ? 1 : 0) + (run.expected ? 1 : 0);
  uint64_t records = 0;
  for (const auto& rank : run.records.ranks) records += rank.size();
  uint64_t names = 0;
  for (const std::string& n : run.meta.class_names) names += n.size() + 8;
  // Cells take 8 bytes (int64 or float64); a record is index, target, prediction and flags.
  // 1 MiB covers the .npy headers, the rest of meta.json and the ZIP directory.
  const uint64_t bytes = matrices * uint64_t(c) * uint64_t(c) * 8 + records * (8 + 4 + 4 + 1) +
                         names + (uint64_t(1) << 20);
  if (bytes > kMaxReadBytes) {
    fail("run file", std::to_string(matrices) + " matrices of " + std::to_string(c) + " x " +
                         std::to_string(c) + " and " + std::to_string(records) + " records take " +
                         std::to_string(bytes >> 20) + " MiB, more than the " +
                         std::to_string(kMaxReadBytes >> 20) +
                         " MiB a run file may hold to be read back");
  }
}

}  // namespace

void validate_run(const RunFile& run, const std::string& origin) {
  const RunMeta& m = run.meta;
  const int32_t c = m.classes;
  if (c < 1 || c > kMaxClasses) fail(origin, "class count " + std::to_string(c) + " out of range");
  if (m.world_size < 1 || m.world_size > kMaxWorldSize)
    fail(origin, "world size " + std::to_string(m.world_size) + " out of range");
  if (run.records.world_size() != m.world_size) {
    fail(origin, "records of " + std::to_string(run.records.world_size()) +
                     " ranks for world size " + std::to_string(m.world_size));
  }
  if (run.per_rank.size() != size_t(m.world_size)) {
    fail(origin, std::to_string(run.per_rank.size()) + " per-rank matrices for world size " +
                     std::to_string(m.world_size));
  }
  auto check_shape = [&](const Matrix& mat, const std::string& what) {
    if (mat.classes != c || mat.cells.size() != size_t(c) * size_t(c))
      fail(origin, what + " is not a " + std::to_string(c) + " x " + std::to_string(c) + " matrix");
  };
  for (int r = 0; r < m.world_size; ++r)
    check_shape(run.per_rank[r], "rank " + std::to_string(r) + " matrix");
  if (run.has_synced()) {
    check_shape(run.synced, "synced");
  } else if (m.complete) {
    fail(origin, "a complete run lacks the synced matrix");
  }
  if (run.expected) check_shape(*run.expected, "expected");
  if (!run.reported_per_rank.empty() && run.reported_per_rank.size() != size_t(m.world_size))
    fail(origin, std::to_string(run.reported_per_rank.size()) +
                     " per-rank reported matrices for world size " + std::to_string(m.world_size));
  for (size_t r = 0; r < run.reported_per_rank.size(); ++r)
    if (run.reported_per_rank[r])
      check_shape(*run.reported_per_rank[r], "rank " + std::to_string(r) + " reported matrix");
  if (m.class_counts.size() != size_t(c)) {
    fail(origin, std::to_string(m.class_counts.size()) + " class counts for " + std::to_string(c) +
                     " classes");
  }
  int64_t total = 0;
  for (int64_t k : m.class_counts) {
    if (k < 0) fail(origin, "negative class count");
    if (k > INT64_MAX - total) fail(origin, "class counts add up to more than 2^63 - 1");
    total += k;
  }
  if (m.class_counts_source == "dataset" && total != m.dataset_size) {
    fail(origin, "class counts sum to " + std::to_string(total) + " but the dataset has " +
                     std::to_string(m.dataset_size) + " samples");
  }
  if (!m.class_names.empty() && m.class_names.size() != size_t(c))
    fail(origin, "class names do not match the class count");
  for (int r = 0; r < m.world_size; ++r) {
    int64_t pos = 0;
    for (const Record& rec : run.records.ranks[r]) {
      auto where = [&] {
        return "rank " + std::to_string(r) + " record " + std::to_string(pos) + ": ";
      };
      if (rec.index < 0 || (m.dataset_size > 0 && rec.index >= m.dataset_size)) {
        fail(origin, where() + "dataset index " + std::to_string(rec.index) + " outside [0, " +
                         std::to_string(m.dataset_size) + ")");
      }
      if ((rec.target < 0 || rec.target >= c) && rec.target != m.ignore_index)
        fail(origin, where() + "target " + std::to_string(rec.target) + " outside [0, " +
                         std::to_string(c) + ")");
      if (rec.prediction < 0 || rec.prediction >= c) {
        fail(origin, where() + "prediction " + std::to_string(rec.prediction) + " outside [0, " +
                         std::to_string(c) + ")");
      }
      ++pos;
    }
  }
}

std::vector<std::pair<std::string, std::string>> run_file_members(const RunFile& run) {
  check_readable_size(run);
  validate_run(run, "run file");
  std::map<std::string, std::string> members;
  for (int r = 0; r < run.meta.world_size; ++r) {
    const auto& recs = run.records.ranks[r];
    const int64_t len = static_cast<int64_t>(recs.size());
    std::vector<int64_t> index(recs.size());
    std::vector<int32_t> target(recs.size()), prediction(recs.size());
    std::vector<uint8_t> flags(recs.size());
    for (size_t i = 0; i < recs.size(); ++i) {
      index[i] = recs[i].index;
      target[i] = recs[i].target;
      prediction[i] = recs[i].prediction;
      flags[i] = recs[i].flags;
    }
    members[rank_member(r, "index")] = npy_bytes(index, {len});
    members[rank_member(r, "target")] = npy_bytes(target, {len});
    members[rank_member(r, "prediction")] = npy_bytes(prediction, {len});
    members[rank_member(r, "flags")] = npy_bytes(flags, {len});
    members[rank_member(r, "matrix")] = matrix_npy(run.per_rank[r]);
  }
  if (run.has_synced()) members["synced.npy"] = matrix_npy(run.synced);
  if (run.expected) members["expected.npy"] = matrix_npy(*run.expected);
  for (size_t r = 0; r < run.reported_per_rank.size(); ++r)
    if (run.reported_per_rank[r])
      members[rank_member(int(r), "reported")] = matrix_npy(*run.reported_per_rank[r]);
  const json meta = meta_json(run, members);
  std::vector<std::pair<std::string, std::string>> out(members.begin(), members.end());
  out.emplace_back("meta.json", meta.dump(2) + "\n");
  return out;
}

void save_run_file(const RunFile& run, const std::string& path) {
  write_npz(path, run_file_members(run));
}

namespace {

// The archive's meta.json, parsed.
json meta_json_of(const std::map<std::string, std::string>& members, const std::string& origin) {
  auto meta_it = members.find("meta.json");
  if (meta_it == members.end()) fail(origin, "not a ShardLens run file (no meta.json member)");
  json j;
  try {
    j = json::parse(meta_it->second);
  } catch (const json::exception& e) {
    fail(origin, std::string("meta.json is not valid JSON (") + e.what() + ")");
  }
  return j;
}

// One evaluation's members (names without an epoch prefix).
RunFile parse_run_members(const std::map<std::string, std::string>& members,
                          const std::string& origin) {
  const json j = meta_json_of(members, origin);
  RunFile run;
  run.meta = parse_meta(j, origin);
  const RunMeta& m = run.meta;

  // Checksums: every member but meta.json is listed, every listed member is there and intact.
  const json& sums = field(j, "members", origin);
  if (!sums.is_object()) fail(origin, "meta.json: 'members' is not an object");
  for (const auto& [name, data] : members) {
    if (name == "meta.json") continue;
    auto it = sums.find(name);
    if (it == sums.end()) fail(origin, "member " + name + " is not listed in meta.json");
    if (!it->is_object() || !it->contains("sha256") || !(*it)["sha256"].is_string())
      fail(origin, "meta.json: no sha256 for member " + name);
    if ((*it)["sha256"].get<std::string>() != sha256_hex(data))
      fail(origin, "member " + name + " is damaged (SHA-256 checksum mismatch)");
  }
  for (const auto& [name, _] : sums.items()) {
    if (!members.count(name)) fail(origin, "member " + name + " listed in meta.json is missing");
  }

  // Expected members, nothing else.
  std::set<std::string> known = {"meta.json", "synced.npy", "expected.npy"};
  for (int r = 0; r < m.world_size; ++r) {
    for (const char* what : {"index", "target", "prediction", "flags", "matrix"}) {
      const std::string name = rank_member(r, what);
      if (!members.count(name)) fail(origin, "member " + name + " is missing");
      known.insert(name);
    }
    known.insert(rank_member(r, "reported"));  // optional
  }
  for (const auto& [name, _] : members) {
    if (!known.count(name)) fail(origin, "unexpected member " + name);
  }

  const std::vector<int64_t> sizes = int_list(j, "records_per_rank", origin, kMaxWorldSize);
  if (sizes.size() != size_t(m.world_size))
    fail(origin, "meta.json: 'records_per_rank' does not have one entry per rank");
  run.records.ranks.resize(m.world_size);
  for (int r = 0; r < m.world_size; ++r) {
    const auto index = read_vector(members, rank_member(r, "index"), origin);
    const auto target = read_vector(members, rank_member(r, "target"), origin);
    const auto prediction = read_vector(members, rank_member(r, "prediction"), origin);
    const auto flags = read_vector(members, rank_member(r, "flags"), origin);
    if (target.size() != index.size() || prediction.size() != index.size() ||
        flags.size() != index.size()) {
      fail(origin, "rank " + std::to_string(r) +
                       ": index, target, prediction and flags have different lengths (" +
                       std::to_string(index.size()) + ", " + std::to_string(target.size()) + ", " +
                       std::to_string(prediction.size()) + ", " + std::to_string(flags.size()) +
                       ")");
    }
    if (int64_t(index.size()) != sizes[r]) {
      fail(origin, "rank " + std::to_string(r) + " has " + std::to_string(index.size()) +
                       " records, meta.json says " + std::to_string(sizes[r]));
    }
    auto& out = run.records.ranks[r];
    out.resize(index.size());
    for (size_t i = 0; i < index.size(); ++i) {
      if (target[i] < INT32_MIN || target[i] > INT32_MAX || prediction[i] < INT32_MIN ||
          prediction[i] > INT32_MAX || flags[i] < 0 || flags[i] > 255) {
        fail(origin,
             "rank " + std::to_string(r) + " record " + std::to_string(i) + ": value out of range");
      }
      out[i] = Record{index[i], static_cast<int32_t>(target[i]),
                      static_cast<int32_t>(prediction[i]), static_cast<uint8_t>(flags[i])};
    }
    run.per_rank.push_back(read_matrix(members, rank_member(r, "matrix"), m.classes, origin));
  }
  if (members.count("synced.npy"))
    run.synced = read_matrix(members, "synced.npy", m.classes, origin);
  if (members.count("expected.npy"))
    run.expected = read_matrix(members, "expected.npy", m.classes, origin);
  for (int r = 0; r < m.world_size; ++r) {
    if (!members.count(rank_member(r, "reported"))) continue;
    run.reported_per_rank.resize(size_t(m.world_size));
    run.reported_per_rank[size_t(r)] =
        read_matrix(members, rank_member(r, "reported"), m.classes, origin);
  }
  validate_run(run, origin);
  return run;
}

std::string epoch_prefix(int64_t epoch) {
  return "epoch" + std::to_string(epoch) + "_";
}

// The members under `prefix`, without it; marks them claimed.
std::map<std::string, std::string> members_under(const std::map<std::string, std::string>& members,
                                                 const std::string& prefix,
                                                 std::set<std::string>& claimed) {
  std::map<std::string, std::string> mine;
  for (auto it = members.lower_bound(prefix);
       it != members.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    mine[it->first.substr(prefix.size())] = it->second;
    claimed.insert(it->first);
  }
  return mine;
}

// What tells an evaluation from the others of its run.
json evaluation_key(const RunMeta& m) {
  json k = {{"epoch", m.epoch ? json(*m.epoch) : json(nullptr)}};
  if (!m.stage.empty()) k["stage"] = m.stage;
  if (m.validation_in_epoch) k["validation_in_epoch"] = *m.validation_in_epoch;
  if (m.dataloader_idx) k["dataloader_idx"] = *m.dataloader_idx;
  return k;
}

// Other stages after test, by name.
using OrderKey = std::tuple<int64_t, int, int64_t, int64_t, std::string>;
OrderKey order_key(const RunMeta& m) {
  const bool validate = m.stage.empty() || m.stage == "validate";
  const int stage = validate ? 0 : m.stage == "test" ? 1 : 2;
  return {m.epoch.value_or(-1), stage, m.validation_in_epoch.value_or(-1),
          m.dataloader_idx.value_or(-1), validate ? std::string() : m.stage};
}

// A multi-evaluation meta.json names the format and a version this build can read.
void check_format(const json& j, const std::string& origin, int64_t supported) {
  if (string_field(j, "format", origin) != kRunFormatName)
    fail(origin, "meta.json: not a ShardLens run file (format is not 'shardlens-run')");
  const int64_t version = int_field(j, "format_version", origin, 1, 1 << 20);
  if (version > supported)
    fail(origin, "run file format version " + std::to_string(version) +
                     " is newer than this ShardLens supports (" + std::to_string(supported) + ")");
}

std::string evaluation_prefix(size_t k) {
  return "eval" + std::to_string(k) + "_";
}

// Version 3: a list of evaluations, each under "eval<k>_" with its own meta.json.
std::vector<RunFile> run_evaluations_from_members(const std::map<std::string, std::string>& members,
                                                  const json& j, const std::string& origin) {
  check_format(j, origin, kRunFormatVersionEvaluations);
  const json& list = field(j, "evaluations", origin);
  if (!list.is_array() || list.empty() || list.size() > size_t(kMaxEpochs))
    fail(origin, "meta.json: 'evaluations' is not a non-empty list");
  std::set<std::string> claimed = {"meta.json"};
  std::vector<RunFile> out;
  for (size_t k = 0; k < list.size(); ++k) {
    const json& entry = list[k];
    if (!entry.is_object()) fail(origin, "meta.json: 'evaluations' holds a non-object");
    const std::string prefix = evaluation_prefix(k);
    if (string_field(entry, "prefix", origin) != prefix)
      fail(origin, "meta.json: evaluation " + std::to_string(k) + " is not under " + prefix);
    const std::string where = origin + ": evaluation " + std::to_string(k);
    RunFile run = parse_run_members(members_under(members, prefix, claimed), where);
    json key = evaluation_key(run.meta);
    json listed = entry;
    listed.erase("prefix");
    listed.erase("label");
    if (listed != key)
      fail(where, "its meta.json says " + key.dump() + ", the list " + listed.dump());
    if (!run.meta.epoch) fail(where, "has no epoch number");
    if (!out.empty() && !evaluation_before(out.back().meta, run.meta))
      fail(where, key.dump() + " does not come after the evaluation before it");
    out.push_back(std::move(run));
  }
  for (const auto& [name, _] : members)
    if (!claimed.count(name)) fail(origin, "unexpected member " + name);
  return out;
}

std::vector<RunFile> run_epochs_from_members(const std::map<std::string, std::string>& members,
                                             const std::string& origin) {
  // The members are held while the run is built from them: one rank's columns as int64 at a
  // time (8 bytes a value where the file may hold 1), and the records (a Record per 17 bytes
  // of columns) and matrices. Three times the members bounds that.
  uint64_t member_bytes = 0;
  for (const auto& [name, bytes] : members) member_bytes += bytes.size();
  check_load_budget(origin, member_bytes * 3, "its members and the run built from them");
  const json j = meta_json_of(members, origin);
  if (j.is_object() && j.contains("evaluations"))
    return run_evaluations_from_members(members, j, origin);
  if (!j.is_object() || !j.contains("epochs")) return {parse_run_members(members, origin)};
  // Several epochs: each one's members prefixed "epoch<e>_", with their own meta.json.
  check_format(j, origin, kRunFormatVersionEpochs);
  const std::vector<int64_t> epochs = int_list(j, "epochs", origin, kMaxEpochs);
  if (epochs.empty()) fail(origin, "meta.json: 'epochs' is empty");
  std::set<std::string> claimed = {"meta.json"};
  std::vector<RunFile> out;
  for (size_t k = 0; k < epochs.size(); ++k) {
    if (k > 0 && epochs[k] <= epochs[k - 1])
      fail(origin, "meta.json: 'epochs' is not strictly increasing");
    const std::map<std::string, std::string> mine =
        members_under(members, epoch_prefix(epochs[k]), claimed);
    const std::string where = origin + ": epoch " + std::to_string(epochs[k]);
    RunFile run = parse_run_members(mine, where);
    if (run.meta.epoch != epochs[k])
      fail(where, "its meta.json says epoch " +
                      (run.meta.epoch ? std::to_string(*run.meta.epoch) : std::string("none")));
    out.push_back(std::move(run));
  }
  for (const auto& [name, _] : members)
    if (!claimed.count(name)) fail(origin, "unexpected member " + name);
  return out;
}

}  // namespace

bool evaluation_before(const RunMeta& a, const RunMeta& b) {
  return order_key(a) < order_key(b);
}

std::vector<RunFile> parse_run_epochs(const std::string& bytes, const std::string& origin) {
  return run_epochs_from_members(npz_members_from_bytes(bytes, origin), origin);
}

RunFile parse_run_file(const std::string& bytes, const std::string& origin) {
  std::vector<RunFile> epochs = parse_run_epochs(bytes, origin);
  if (epochs.size() != 1)
    fail(origin,
         "holds " + std::to_string(epochs.size()) + " epochs; open it as a multi-epoch run");
  return std::move(epochs.front());
}

RunFile load_run_file(const std::string& path) {
  std::vector<RunFile> epochs = load_run_epochs(path);
  if (epochs.size() != 1)
    fail(path, "holds " + std::to_string(epochs.size()) + " epochs; open it as a multi-epoch run");
  return std::move(epochs.front());
}

// Members read from the file one at a time (never the whole file in memory beside them).
std::vector<RunFile> load_run_epochs(const std::string& path) {
  return run_epochs_from_members(read_npz(path), path);
}

std::vector<std::pair<std::string, std::string>> run_epochs_members(
    const std::vector<RunFile>& epochs) {
  if (epochs.empty()) throw InputError("run file: no epochs to save");
  if (epochs.size() == 1) return run_file_members(epochs.front());
  std::vector<std::pair<std::string, std::string>> out;
  json top;
  top["format"] = kRunFormatName;
  top["created_by"] = std::string("ShardLens ") + SHARDLENS_VERSION;
  // Version 2 (readable by older ShardLens) when the epoch alone tells them apart.
  bool by_epoch = true;
  for (size_t k = 0; k < epochs.size(); ++k) {
    const RunMeta& m = epochs[k].meta;
    if (!m.epoch)
      throw InputError("run file: evaluation " + std::to_string(k) + " has no epoch number");
    if (k > 0 && !evaluation_before(epochs[k - 1].meta, m))
      throw InputError("run file: evaluations are not in increasing order (" +
                       evaluation_key(m).dump() + " after " +
                       evaluation_key(epochs[k - 1].meta).dump() + ")");
    by_epoch = by_epoch && (m.stage.empty() || m.stage == "validate") && !m.validation_in_epoch &&
               !m.dataloader_idx && (k == 0 || *m.epoch > *epochs[k - 1].meta.epoch);
  }
  if (!by_epoch) {
    top["format_version"] = kRunFormatVersionEvaluations;
    json list = json::array();
    for (size_t k = 0; k < epochs.size(); ++k) {
      json entry = evaluation_key(epochs[k].meta);
      entry["prefix"] = evaluation_prefix(k);
      list.push_back(entry);
      for (auto& [name, bytes] : run_file_members(epochs[k]))
        out.emplace_back(evaluation_prefix(k) + name, std::move(bytes));
    }
    top["evaluations"] = list;
    out.emplace_back("meta.json", top.dump(2));
    return out;
  }
  top["format_version"] = kRunFormatVersionEpochs;
  json list = json::array();
  for (size_t k = 0; k < epochs.size(); ++k) {
    const auto& e = epochs[k].meta.epoch;
    list.push_back(*e);
    for (auto& [name, bytes] : run_file_members(epochs[k]))
      out.emplace_back(epoch_prefix(*e) + name, std::move(bytes));
  }
  top["epochs"] = list;
  out.emplace_back("meta.json", top.dump(2));
  return out;
}

void save_run_epochs(const std::vector<RunFile>& epochs, const std::string& path) {
  write_npz(path, run_epochs_members(epochs));
}

}  // namespace shardlens

namespace shardlens {
namespace {

// An optional non-negative integer of a meta.json object; absent when the key is.
std::optional<int64_t> optional_index(const nlohmann::json& j, const char* key,
                                      const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    throw InputError(origin + ": meta.json: '" + key + "' is not a non-negative integer");
  return it->get<int64_t>();
}

RunEvaluationEntry entry_of(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw InputError(origin + ": meta.json: an evaluation is not an object");
  RunEvaluationEntry e;
  e.epoch = optional_index(j, "epoch", origin);
  if (auto it = j.find("stage"); it != j.end()) {
    if (!it->is_string()) throw InputError(origin + ": meta.json: 'stage' is not a string");
    e.stage = it->get<std::string>();
  }
  e.validation_in_epoch = optional_index(j, "validation_in_epoch", origin);
  e.dataloader_idx = optional_index(j, "dataloader_idx", origin);
  return e;
}

}  // namespace

std::vector<RunEvaluationEntry> list_run_evaluations(const std::string& path) {
  NpzArchive archive = NpzArchive::open_file(path);
  if (!archive.find("meta.json"))
    throw InputError(path + ": not a ShardLens run file (no meta.json member)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(archive.read("meta.json"));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": meta.json is not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object() || j.value("format", std::string()) != kRunFormatName)
    throw InputError(path + ": meta.json: not a ShardLens run file (format is not '" +
                     std::string(kRunFormatName) + "')");
  std::vector<RunEvaluationEntry> out;
  const auto list = [&](const char* key) -> const nlohmann::json& {
    const nlohmann::json& v = j[key];
    if (!v.is_array() || v.empty() || v.size() > size_t(kMaxEpochs))
      throw InputError(path + ": meta.json: '" + key + "' is not a non-empty list");
    return v;
  };
  if (j.contains("evaluations")) {  // version 3
    for (const nlohmann::json& entry : list("evaluations")) out.push_back(entry_of(entry, path));
  } else if (j.contains("epochs")) {  // version 2
    for (const nlohmann::json& epoch : list("epochs")) {
      RunEvaluationEntry e;
      e.epoch = optional_index(nlohmann::json{{"epoch", epoch}}, "epoch", path);
      out.push_back(e);
    }
  } else {  // version 1: the one evaluation's own meta.json
    out.push_back(entry_of(j, path));
  }
  return out;
}

}  // namespace shardlens

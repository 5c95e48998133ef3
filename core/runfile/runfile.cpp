#include "core/runfile/runfile.h"
#include "core/io/output_text.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/evaluation/caption.h"
#include "core/io/files.h"
#include "core/io/json_fields.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/sha256.h"
#include "core/runfile/dump_cells.h"
#include "core/runfile/import_arrays.h"
#include "core/runfile/record_checks.h"
#include "core/runfile/sparse_matrix.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"
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

// A matrix member's name without ".npy": "rank0_matrix", "synced".
std::string rank_stem(int rank, const char* what) {
  return "rank" + std::to_string(rank) + "_" + what;
}

constexpr const char* kSparseSuffix = "_sparse.npy";
// The members of a rank's records' cells (a task of many counts).
constexpr const char* kCellMembers[] = {"cells_per_record", "cell_key", "cell_count"};
// meta.json's list of the ranks whose reported matrix is the synced one, stored once (version 4).
constexpr const char* kReportedSameAsSynced = "reported_same_as_synced";

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

// The member of a matrix stored as "<stem>.npy" [C, C], or as its nonzero cells
// "<stem>_sparse.npy" [K, 3] where that is smaller (sparse_matrix.h).
void put_matrix(std::map<std::string, std::string>& members, const std::string& stem,
                const Matrix& m) {
  if (std::optional<std::string> sparse = sparse_matrix_npy(m)) {
    members[stem + kSparseSuffix] = std::move(*sparse);
  } else {
    members[stem + ".npy"] = matrix_npy(m);
  }
}

// Rank r's records' cells, record by record: how many, then their keys and counts.
void put_rank_cells(std::map<std::string, std::string>& members, int r,
                    const std::vector<Record>& records, const CellTable& table) {
  std::vector<int64_t> per(records.size()), counts;
  std::vector<int32_t> keys;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto row_keys = table.keys_of(records[i].cells);
    const auto row_counts = table.counts_of(records[i].cells);
    per[i] = int64_t(row_keys.size());
    keys.insert(keys.end(), row_keys.begin(), row_keys.end());
    counts.insert(counts.end(), row_counts.begin(), row_counts.end());
  }
  members[rank_member(r, "cells_per_record")] = npy_bytes(per, {int64_t(per.size())});
  members[rank_member(r, "cell_key")] = npy_bytes(keys, {int64_t(keys.size())});
  members[rank_member(r, "cell_count")] = npy_bytes(counts, {int64_t(counts.size())});
}

bool has_sparse_member(const std::map<std::string, std::string>& members) {
  return std::any_of(members.begin(), members.end(),
                     [](const auto& member) { return member.first.ends_with(kSparseSuffix); });
}

// Where a meta.json field's errors are: "FILE: meta.json: 'key' must be ...".
std::string in_meta(const std::string& origin) {
  return origin + ": meta.json";
}

// --- meta.json: one row per key, from which it is both written and read ---------------------

enum class Presence {
  Required,  // always written; a file without it is refused
  Nullable,  // always written, null when unset; a file without it is refused
  Optional,  // written only when set; a file may leave it out
};

struct MetaField {
  const char* key;
  Presence presence;
  std::function<bool(const RunMetadata&)> is_set;  // Nullable and Optional rows
  std::function<json(const RunMetadata&)> write;
  // Reads and checks the key's value (present, not null) from the meta.json object `j`. The
  // rows above it are read already: class names are checked against the class count.
  std::function<void(const json& j, RunMetadata&, const std::string& origin)> read;
};

MetaField text(const char* key, std::string RunMetadata::*member) {
  return {key, Presence::Required, nullptr, [=](const RunMetadata& m) { return json(m.*member); },
          [=](const json& j, RunMetadata& m, const std::string& origin) {
            m.*member = json_string(j, key, in_meta(origin));
          }};
}

// Written only when not empty.
MetaField optional_text(const char* key, std::string RunMetadata::*member) {
  MetaField f = text(key, member);
  f.presence = Presence::Optional;
  f.is_set = [=](const RunMetadata& m) { return !(m.*member).empty(); };
  return f;
}

template <class Int>
MetaField integer(const char* key, Int RunMetadata::*member, int64_t lo, int64_t hi) {
  return {key, Presence::Required, nullptr, [=](const RunMetadata& m) { return json(m.*member); },
          [=](const json& j, RunMetadata& m, const std::string& origin) {
            m.*member = static_cast<Int>(json_integer(j, key, in_meta(origin), lo, hi));
          }};
}

// An integer that may be unknown: left out (Optional) or written as null (Nullable).
MetaField maybe_integer(const char* key, std::optional<int64_t> RunMetadata::*member,
                        Presence presence, int64_t lo, int64_t hi) {
  return {key, presence, [=](const RunMetadata& m) { return (m.*member).has_value(); },
          [=](const RunMetadata& m) { return json(*(m.*member)); },
          [=](const json& j, RunMetadata& m, const std::string& origin) {
            m.*member = json_integer(j, key, in_meta(origin), lo, hi);
          }};
}

MetaField flag(const char* key, bool RunMetadata::*member) {
  return {key, Presence::Required, nullptr, [=](const RunMetadata& m) { return json(m.*member); },
          [=](const json& j, RunMetadata& m, const std::string& origin) {
            m.*member = json_bool(j, key, in_meta(origin));
          }};
}

MetaField integers(const char* key, std::vector<int64_t> RunMetadata::*member, size_t max_len) {
  return {key, Presence::Required, nullptr, [=](const RunMetadata& m) { return json(m.*member); },
          [=](const json& j, RunMetadata& m, const std::string& origin) {
            m.*member = json_integers(j, key, in_meta(origin), max_len);
          }};
}

// The rows in the order a file is checked (the first thing wrong is the one reported).
// records_per_rank and members describe the arrays and are written beside them.
const std::vector<MetaField>& meta_fields() {
  static const std::vector<MetaField> fields = {
      {"format", Presence::Required, nullptr,
       [](const RunMetadata&) { return json(kRunFormatName); },
       [](const json& j, RunMetadata&, const std::string& origin) {
         if (json_string(j, "format", in_meta(origin)) != kRunFormatName)
           fail(origin, "meta.json: not a ShardLens run file (format is not 'shardlens-run')");
       }},
      {"format_version", Presence::Required, nullptr,
       [](const RunMetadata& m) { return json(m.format_version); },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         m.format_version = static_cast<int>(
             json_integer(j, "format_version", in_meta(origin), 1, kMaxFormatVersionField));
         if (m.format_version > kRunFormatVersionCells) {
           fail(origin, "run file format version " + std::to_string(m.format_version) +
                            " is newer than this ShardLens supports (" +
                            std::to_string(kRunFormatVersionCells) + ")");
         }
         // 2 and 3 are the versions of a file of several evaluations, never of one.
         if (m.format_version != kRunFormatVersion && m.format_version != kRunFormatVersionSparse &&
             m.format_version != kRunFormatVersionCells)
           fail(origin, "meta.json: format_version " + std::to_string(m.format_version) +
                            " is not the version of one evaluation (" +
                            std::to_string(kRunFormatVersion) + ", " +
                            std::to_string(kRunFormatVersionSparse) + " or " +
                            std::to_string(kRunFormatVersionCells) + ")");
       }},
      {"created_by", Presence::Required, nullptr,
       [](const RunMetadata& m) {
         return json(m.created_by.empty() ? std::string("ShardLens ") + SHARDLENS_VERSION
                                          : m.created_by);
       },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         m.created_by = json_string(j, "created_by", in_meta(origin));
       }},
      text("source", &RunMetadata::source),
      text("backend", &RunMetadata::backend),
      text("torch_version", &RunMetadata::torch_version),
      {"scenario", Presence::Nullable, [](const RunMetadata& m) { return m.scenario.has_value(); },
       // Recorded under what it is: an edited lesson's title would no longer be true.
       [](const RunMetadata& m) { return to_json(retitled(*m.scenario)); },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         m.scenario = scenario_from_json(j.at("scenario"), origin + ": meta.json scenario");
       }},
      integer("classes", &RunMetadata::classes, 1, kMaxClasses),
      {"task", Presence::Optional,
       [](const RunMetadata& m) { return m.task != Task::Classification; },
       [](const RunMetadata& m) { return json(to_string(m.task)); },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         const std::string text = json_string(j, "task", in_meta(origin));
         const std::optional<Task> parsed = task_from_string(text);
         if (!parsed)
           fail(origin, "meta.json: task '" + text +
                            "' is none of classification, segmentation, tokens, multilabel");
         m.task = *parsed;
       }},
      integer("world_size", &RunMetadata::world_size, 1, kMaxWorldSize),
      // Per-index state is allocated from it: bounded like every dataset.
      integer("dataset_size", &RunMetadata::dataset_size, 0, kMaxSamples),
      {"class_names", Presence::Required, nullptr,
       [](const RunMetadata& m) { return json(m.class_names); },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         m.class_names = json_strings(j, "class_names", in_meta(origin));
         for (size_t c = 0; c < m.class_names.size(); ++c)
           if (m.class_names[c].size() > kMaxClassNameBytes)
             fail(origin, "meta.json: class name " + std::to_string(c) + " has " +
                              std::to_string(m.class_names[c].size()) + " bytes, more than the " +
                              std::to_string(kMaxClassNameBytes) + " a name may have");
         if (!m.class_names.empty() && m.class_names.size() != size_t(m.classes)) {
           fail(origin, "meta.json: " + std::to_string(m.class_names.size()) + " class names for " +
                            std::to_string(m.classes) + " classes");
         }
       }},
      integers("class_counts", &RunMetadata::class_counts, kMaxClasses),
      text("class_counts_source", &RunMetadata::class_counts_source),
      maybe_integer("batch_size", &RunMetadata::batch_size, Presence::Nullable, 1, INT64_MAX),
      integer("ignore_index", &RunMetadata::ignore_index, INT32_MIN, INT32_MAX),
      flag("complete", &RunMetadata::complete),
      text("incomplete_reason", &RunMetadata::incomplete_reason),
      {"failed_ranks", Presence::Required, nullptr,
       [](const RunMetadata& m) { return json(m.failed_ranks); },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         for (int64_t r : json_integers(j, "failed_ranks", in_meta(origin), kMaxWorldSize)) {
           if (r < 0 || r >= m.world_size)
             fail(origin, "meta.json: failed rank " + std::to_string(r) + " out of range");
           m.failed_ranks.push_back(static_cast<int>(r));
         }
       }},
      {"provided_matrices", Presence::Optional,
       [](const RunMetadata& m) { return m.provided_matrices.has_value(); },
       [](const RunMetadata& m) { return json(*m.provided_matrices); },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         std::vector<int> ranks;
         for (int64_t r : json_integers(j, "provided_matrices", in_meta(origin), kMaxWorldSize)) {
           if (r < 0 || r >= m.world_size)
             fail(origin,
                  "meta.json: provided_matrices: rank " + std::to_string(r) + " out of range");
           ranks.push_back(static_cast<int>(r));
         }
         m.provided_matrices = std::move(ranks);
       }},
      optional_text("sync_note", &RunMetadata::sync_note),
      {"synced_origin", Presence::Optional,
       [](const RunMetadata& m) { return m.synced_origin != SyncedOrigin::Unknown; },
       [](const RunMetadata& m) { return json(to_string(m.synced_origin)); },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         const std::string text = json_string(j, "synced_origin", in_meta(origin));
         const std::optional<SyncedOrigin> parsed = parse_synced_origin(text);
         if (!parsed)
           fail(origin,
                "meta.json: synced_origin '" + text + "' is none of " + synced_origin_choices());
         m.synced_origin = *parsed;
       }},
      optional_text("dataset", &RunMetadata::dataset),
      optional_text("launcher", &RunMetadata::launcher),
      maybe_integer("epoch", &RunMetadata::epoch, Presence::Optional, 0, INT64_MAX),
      optional_text("stage", &RunMetadata::stage),
      maybe_integer("validation_in_epoch", &RunMetadata::validation_in_epoch, Presence::Optional, 0,
                    INT32_MAX),
      maybe_integer("dataloader_idx", &RunMetadata::dataloader_idx, Presence::Optional, 0,
                    INT32_MAX),
      {"recorded_settings", Presence::Optional,
       [](const RunMetadata& m) { return m.recorded.has_value(); },
       [](const RunMetadata& m) { return json::parse(m.recorded->text); },
       [](const json& j, RunMetadata& m, const std::string& origin) {
         const json& r = json_object(j, "recorded_settings", in_meta(origin));
         m.recorded = parse_recorded_settings(r.dump(), origin + ": meta.json");
       }},
  };
  return fields;
}

json meta_json(const RunFile& run, const std::map<std::string, std::string>& members) {
  json j;
  for (const MetaField& f : meta_fields()) {
    if (f.presence == Presence::Optional && !f.is_set(run.meta)) continue;
    const bool null = f.presence == Presence::Nullable && !f.is_set(run.meta);
    j[f.key] = null ? json(nullptr) : f.write(run.meta);
  }
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

RunMetadata parse_meta(const json& j, const std::string& origin) {
  if (!j.is_object()) fail(origin, "meta.json is not a JSON object");
  RunMetadata m;
  for (const MetaField& f : meta_fields()) {
    const auto it = j.find(f.key);
    if (f.presence == Presence::Optional && it == j.end()) continue;
    if (f.presence == Presence::Nullable && json_value(j, f.key, in_meta(origin)).is_null())
      continue;
    f.read(j, m, origin);
  }
  return m;
}

// The members holding rank r's records, named when one of their values is out of bounds.
RecordSite rank_site(const std::string& origin, int r) {
  RecordSite site{origin, {}};
  site.keys[size_t(RecordField::Index)] = "member " + rank_member(r, "index");
  site.keys[size_t(RecordField::Target)] = "member " + rank_member(r, "target");
  site.keys[size_t(RecordField::Prediction)] = "member " + rank_member(r, "prediction");
  site.keys[size_t(RecordField::Flags)] = "member " + rank_member(r, "flags");
  return site;
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
  // What was reported (synced, rank{r}_reported) may hold a normalize-then-sum's fractions.
  const bool reported = name == "synced.npy" || name.ends_with("_reported.npy");
  check_counts(m, origin, name, Overflow::Kept, reported ? Fractions::Kept : Fractions::Refused);
  return m;
}

// The matrix stored under `stem` dense or sparse (nullopt when neither is there), checked as
// read_matrix checks a dense one. Sparse members belong to format version 4.
std::optional<Matrix> read_stored_matrix(const std::map<std::string, std::string>& members,
                                         const std::string& stem, const RunMetadata& meta,
                                         const std::string& origin) {
  const std::string dense = stem + ".npy", sparse = stem + kSparseSuffix;
  const bool has_dense = members.count(dense) > 0, has_sparse = members.count(sparse) > 0;
  if (has_dense && has_sparse) fail(origin, "members " + dense + " and " + sparse + " both given");
  if (has_dense) return read_matrix(members, dense, meta.classes, origin);
  if (!has_sparse) return std::nullopt;
  if (meta.format_version < kRunFormatVersionSparse)
    fail(origin, "member " + sparse + " in a file of format version " +
                     std::to_string(meta.format_version) + " (sparse matrices are version " +
                     std::to_string(kRunFormatVersionSparse) + ")");
  const std::string where = origin + ": member " + sparse;
  Matrix m = matrix_from_sparse(dump_import::array_from_npy(members.at(sparse), where),
                                meta.classes, sparse, origin);
  const bool reported = stem == "synced" || stem.ends_with("_reported");
  check_counts(m, origin, sparse, Overflow::Kept, reported ? Fractions::Kept : Fractions::Refused);
  return m;
}

// The ranks meta.json lists as having reported the synced matrix (run_file_members): each gets
// a copy of it, after their own members are read.
void read_reported_same_as_synced(const json& j, RunFile& run, const std::string& origin) {
  if (!j.contains(kReportedSameAsSynced)) return;
  const RunMetadata& m = run.meta;
  if (m.format_version < kRunFormatVersionSparse)
    fail(origin, std::string("meta.json: '") + kReportedSameAsSynced +
                     "' in a file of format version " + std::to_string(m.format_version));
  const std::vector<int64_t> ranks =
      json_integers(j, kReportedSameAsSynced, in_meta(origin), kMaxWorldSize);
  if (!ranks.empty() && !run.has_synced())
    fail(origin, std::string("meta.json: '") + kReportedSameAsSynced + "' without a synced matrix");
  for (int64_t r : ranks) {
    if (r < 0 || r >= m.world_size)
      fail(origin, std::string("meta.json: '") + kReportedSameAsSynced + "': rank " +
                       std::to_string(r) + " out of range");
    run.reported_per_rank.resize(size_t(m.world_size));
    if (run.reported_per_rank[size_t(r)])
      fail(origin, std::string("meta.json: '") + kReportedSameAsSynced + "': rank " +
                       std::to_string(r) + " is listed twice or has its own reported matrix");
    run.reported_per_rank[size_t(r)] = run.synced;
  }
}

// Rank r's records' cells (put_rank_cells) into `table`, a row per record, each checked: as
// many counts as records, adding up to the cells held; keys within C x C, counts in
// [1, 2^32 - 1], no key twice in a record; 2^53 in all at most.
void read_rank_cells(const std::map<std::string, std::string>& members, int r,
                     std::vector<Record>& records, CellTable& table, const std::string& origin) {
  const std::string per_name = rank_member(r, "cells_per_record");
  const std::string key_name = rank_member(r, "cell_key");
  const std::string count_name = rank_member(r, "cell_count");
  const std::vector<int64_t> per = read_vector(members, per_name, origin);
  const std::vector<int64_t> keys = read_vector(members, key_name, origin);
  const std::vector<int64_t> counts = read_vector(members, count_name, origin);
  if (per.size() != records.size())
    fail(origin, "member " + per_name + " has " + std::to_string(per.size()) + " entries for " +
                     std::to_string(records.size()) + " records");
  if (keys.size() != counts.size())
    fail(origin, "members " + key_name + " and " + count_name + " have different lengths (" +
                     std::to_string(keys.size()) + ", " + std::to_string(counts.size()) + ")");
  const int64_t c = table.classes;
  const int64_t last_key = c * c;
  std::vector<uint32_t> row_keys, row_counts;
  uint64_t at = 0;
  int64_t total = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string place =
        origin + ": record " + std::to_string(i) + " of rank " + std::to_string(r) + " (member ";
    if (per[i] < 0 || uint64_t(per[i]) > keys.size() - at)
      fail(origin, "member " + per_name + " gives record " + std::to_string(i) + " " +
                       std::to_string(per[i]) + " cells, of the " +
                       std::to_string(keys.size() - at) + " left in " + key_name);
    row_keys.clear(), row_counts.clear();
    for (uint64_t k = at; k < at + uint64_t(per[i]); ++k) {
      if (keys[k] < 0 || keys[k] >= last_key)
        throw InputError(place + key_name + "): key " + std::to_string(keys[k]) +
                         " is outside [0, " + std::to_string(last_key) + ")");
      if (counts[k] < 1 || counts[k] > int64_t(UINT32_MAX))
        throw InputError(place + count_name + "): count " + std::to_string(counts[k]) +
                         " is outside [1, 2^32 - 1]");
      if (counts[k] > dump_import::kMaxExactCount - total)
        fail(origin, "the records' cells add up to more than 2^53");
      total += counts[k];
      row_keys.push_back(uint32_t(keys[k]));
      row_counts.push_back(uint32_t(counts[k]));
    }
    at += uint64_t(per[i]);
    std::vector<uint32_t> sorted = row_keys;
    std::sort(sorted.begin(), sorted.end());
    if (auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
      throw InputError(place + key_name + "): key " + std::to_string(*twice) +
                       " is given twice in one record");
    if (table.rows() >= int64_t(kOneCell))
      fail(origin, "more records of cells than a run holds (2^32 - 1)");
    records[i].cells = uint32_t(table.add_row(row_keys, row_counts));
  }
  if (at != keys.size())
    fail(origin, "member " + per_name + " adds up to " + std::to_string(at) + " cells, but " +
                     key_name + " holds " + std::to_string(keys.size()));
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
  // A record's cells: its count of them (8 bytes), a key (4) and a count (8) each.
  uint64_t cells = 0;
  if (const CellTable* table = run.records.cell_table())
    for (const auto& rank : run.records.ranks)
      for (const Record& rec : rank)
        if (rec.cells != kOneCell && rec.cells < table->rows())
          cells += table->end(rec.cells) - table->begin(rec.cells);
  uint64_t names = 0;
  for (const std::string& n : run.meta.class_names) names += n.size() + 8;
  // Cells take 8 bytes (int64 or float64); a record is index, target, prediction and flags.
  // 1 MiB covers the .npy headers, the rest of meta.json and the ZIP directory.
  const uint64_t bytes = matrices * uint64_t(c) * uint64_t(c) * 8 + records * (8 + 4 + 4 + 1) +
                         (cells > 0 ? records * 8 + cells * 12 : 0) + names + (uint64_t(1) << 20);
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
  const RunMetadata& m = run.meta;
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
  // A task of many counts a sample counts pixels or tokens, not samples.
  if (m.class_counts_source == "dataset" && m.task == Task::Classification &&
      total != m.dataset_size) {
    fail(origin, "class counts sum to " + std::to_string(total) + " but the dataset has " +
                     std::to_string(m.dataset_size) + " samples");
  }
  if (!m.class_names.empty() && m.class_names.size() != size_t(c))
    fail(origin, "class names do not match the class count");
  const RecordBounds bounds = RecordBounds::of_run(c, m.dataset_size, m.ignore_index);
  const RecordSite site{origin, {}};
  // A task of many counts: every record names its row of the cells, of the run's classes.
  const CellTable* cells = run.records.cell_table();
  const bool many = m.task != Task::Classification;
  if (many && !cells) fail(origin, "a " + to_string(m.task) + " run without its records' cells");
  if (cells && cells->classes != c)
    fail(origin, "the records' cells are of " + std::to_string(cells->classes) +
                     " classes, the run's of " + std::to_string(c));
  for (int r = 0; r < m.world_size; ++r) {
    const auto& records = run.records.ranks[size_t(r)];
    for (size_t pos = 0; pos < records.size(); ++pos) {
      const Record& rec = records[pos];
      check_record_bounds(bounds, site, int64_t(pos), r, rec);
      if (rec.cells == kOneCell ? !many : cells && rec.cells < cells->rows()) continue;
      fail(origin, "record " + std::to_string(pos) + " of rank " + std::to_string(r) +
                       (rec.cells == kOneCell
                            ? " names no cells in a " + to_string(m.task) + " run"
                            : " names row " + std::to_string(rec.cells) + " of " +
                                  std::to_string(cells ? cells->rows() : 0) + " rows of cells"));
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
    if (run.meta.task != Task::Classification) put_rank_cells(members, r, recs, *run.records.cells);
    put_matrix(members, rank_stem(r, "matrix"), run.per_rank[r]);
  }
  if (run.has_synced()) put_matrix(members, "synced", run.synced);
  if (run.expected) put_matrix(members, "expected", *run.expected);
  // A large reported matrix that is the synced one (every rank reports what it synced) is
  // stored once: at 1000 classes the ranks' copies were most of the file.
  std::vector<int64_t> same_as_synced;
  for (size_t r = 0; r < run.reported_per_rank.size(); ++r) {
    const std::optional<Matrix>& reported = run.reported_per_rank[r];
    if (!reported) continue;
    if (run.has_synced() && reported->cells.size() >= kSparseMinCells && *reported == run.synced)
      same_as_synced.push_back(int64_t(r));
    else
      put_matrix(members, rank_stem(int(r), "reported"), *reported);
  }
  json meta = meta_json(run, members);
  if (!same_as_synced.empty()) meta[kReportedSameAsSynced] = same_as_synced;
  // A reader before sparse matrices would call their members unexpected (or miss the ranks'
  // reported matrices): such a file says the version that has them, which that reader refuses.
  // Cells, read by a reader before them, would count one cell a sample: version 5 (which
  // reads sparse matrices too).
  meta["format_version"] = run.meta.task != Task::Classification ? kRunFormatVersionCells
                           : has_sparse_member(members) || !same_as_synced.empty()
                               ? kRunFormatVersionSparse
                               : kRunFormatVersion;
  std::vector<std::pair<std::string, std::string>> out(members.begin(), members.end());
  out.emplace_back("meta.json", json_text(meta, 2) + "\n");
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
    j = parse_json(meta_it->second, origin + ": meta.json");
  } catch (const json::exception& e) {
    fail(origin, std::string("meta.json is not valid JSON (") + e.what() + ")");
  }
  return j;
}

// What the evaluation of a run will hold, from its meta.json alone: its records, the
// per-index arrays its dataset_size sizes and a matrix per rank. Checked before anything is
// built from the members, beside `held`: what the file's evaluations before it take.
void check_run_budget(const json& j, const RunMetadata& m, const std::string& origin,
                      uint64_t& held) {
  EvaluationSize size{.samples = m.dataset_size, .classes = m.classes, .world_size = m.world_size};
  const auto it = j.find("records_per_rank");
  if (it != j.end() && it->is_array())
    for (const json& v : *it)
      if (v.is_number_integer() && v.get<int64_t>() > 0)
        size.records = v.get<int64_t>() > INT64_MAX - size.records
                           ? INT64_MAX
                           : size.records + v.get<int64_t>();
  check_evaluation_budget(origin, size, held);
  held += evaluation_memory(size);
}

// One evaluation's members (names without an epoch prefix). `held`: what the evaluations of
// the file before this one need (check_run_budget).
RunFile parse_run_members(const std::map<std::string, std::string>& members,
                          const std::string& origin, uint64_t& held) {
  const json j = meta_json_of(members, origin);
  RunFile run;
  run.meta = parse_meta(j, origin);
  const RunMetadata& m = run.meta;
  if (m.task != Task::Classification && m.format_version < kRunFormatVersionCells)
    fail(origin, "meta.json: task '" + to_string(m.task) + "' in a file of format version " +
                     std::to_string(m.format_version) + " (the records' cells are version " +
                     std::to_string(kRunFormatVersionCells) + ")");
  check_run_budget(j, m, origin, held);

  // Checksums: every member but meta.json is listed, every listed member is there and intact.
  const json& sums = json_object(j, "members", origin + ": meta.json");
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
  std::set<std::string> known = {"meta.json", "synced.npy", "expected.npy",
                                 std::string("synced") + kSparseSuffix,
                                 std::string("expected") + kSparseSuffix};
  for (int r = 0; r < m.world_size; ++r) {
    for (const char* what : {"index", "target", "prediction", "flags"}) {
      const std::string name = rank_member(r, what);
      if (!members.count(name)) fail(origin, "member " + name + " is missing");
      known.insert(name);
    }
    for (const char* what : kCellMembers) {  // a task of many counts only
      const std::string name = rank_member(r, what);
      if (m.task != Task::Classification && !members.count(name))
        fail(origin, "member " + name + " is missing (a " + to_string(m.task) +
                         " run's records carry their cells)");
      if (m.task != Task::Classification) known.insert(name);
    }
    for (const char* what : {"matrix", "reported"}) {  // dense or sparse; reported optional
      known.insert(rank_member(r, what));
      known.insert(rank_stem(r, what) + kSparseSuffix);
    }
    if (!members.count(rank_member(r, "matrix")) &&
        !members.count(rank_stem(r, "matrix") + kSparseSuffix))
      fail(origin, "member " + rank_member(r, "matrix") + " is missing");
  }
  for (const auto& [name, _] : members) {
    if (!known.count(name)) fail(origin, "unexpected member " + name);
  }

  const std::vector<int64_t> sizes =
      json_integers(j, "records_per_rank", origin + ": meta.json", kMaxWorldSize);
  if (sizes.size() != size_t(m.world_size))
    fail(origin, "meta.json: 'records_per_rank' does not have one entry per rank");
  run.records.ranks.resize(m.world_size);
  const RecordBounds bounds = RecordBounds::of_run(m.classes, m.dataset_size, m.ignore_index);
  std::shared_ptr<CellTable> cells;
  if (m.task != Task::Classification) {
    cells = std::make_shared<CellTable>();
    cells->classes = m.classes;
  }
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
    const RecordSite site = rank_site(origin, r);
    for (size_t i = 0; i < index.size(); ++i) {
      check_record_bounds(bounds, site, int64_t(i), r, index[i], target[i], prediction[i],
                          flags[i]);
      out[i] = Record{index[i], static_cast<int32_t>(target[i]),
                      static_cast<int32_t>(prediction[i]), static_cast<uint8_t>(flags[i])};
    }
    if (cells) read_rank_cells(members, r, out, *cells, origin);
    run.per_rank.push_back(*read_stored_matrix(members, rank_stem(r, "matrix"), m, origin));
  }
  run.records.cells = std::move(cells);
  if (std::optional<Matrix> synced = read_stored_matrix(members, "synced", m, origin))
    run.synced = std::move(*synced);
  run.expected = read_stored_matrix(members, "expected", m, origin);
  for (int r = 0; r < m.world_size; ++r) {
    std::optional<Matrix> reported =
        read_stored_matrix(members, rank_stem(r, "reported"), m, origin);
    if (!reported) continue;
    run.reported_per_rank.resize(size_t(m.world_size));
    run.reported_per_rank[size_t(r)] = std::move(reported);
  }
  read_reported_same_as_synced(j, run, origin);
  validate_run(run, origin);
  // What the records prove: no stored matrix or count may contradict them.
  check_run_against_records(run, origin);
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
json evaluation_key(const RunMetadata& m) {
  json k = {{"epoch", m.epoch ? json(*m.epoch) : json(nullptr)}};
  if (!m.stage.empty()) k["stage"] = m.stage;
  if (m.validation_in_epoch) k["validation_in_epoch"] = *m.validation_in_epoch;
  if (m.dataloader_idx) k["dataloader_idx"] = *m.dataloader_idx;
  return k;
}

// Other stages after test, by name.
using OrderKey = std::tuple<int64_t, int, int64_t, int64_t, std::string>;
OrderKey order_key(const RunMetadata& m) {
  const bool validate = m.stage.empty() || m.stage == "validate";
  const int stage = validate ? 0 : m.stage == "test" ? 1 : 2;
  return {m.epoch.value_or(-1), stage, m.validation_in_epoch.value_or(-1),
          m.dataloader_idx.value_or(-1), validate ? std::string() : m.stage};
}

// A multi-evaluation meta.json names the format and a version this build can read.
void check_format(const json& j, const std::string& origin, int64_t supported) {
  if (json_string(j, "format", origin + ": meta.json") != kRunFormatName)
    fail(origin, "meta.json: not a ShardLens run file (format is not 'shardlens-run')");
  const int64_t version =
      json_integer(j, "format_version", origin + ": meta.json", 1, kMaxFormatVersionField);
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
  const json& list = json_list(j, "evaluations", origin + ": meta.json", kMaxEpochs);
  if (list.empty()) fail(origin, "meta.json: 'evaluations' must not be empty");
  std::set<std::string> claimed = {"meta.json"};
  std::vector<RunFile> out;
  uint64_t held = 0;
  for (size_t k = 0; k < list.size(); ++k) {
    const json& entry = list[k];
    if (!entry.is_object()) fail(origin, "meta.json: 'evaluations' holds a non-object");
    const std::string prefix = evaluation_prefix(k);
    if (json_string(entry, "prefix", origin + ": meta.json") != prefix)
      fail(origin, "meta.json: evaluation " + std::to_string(k) + " is not under " + prefix);
    const std::string where = origin + ": evaluation " + std::to_string(k);
    RunFile run = parse_run_members(members_under(members, prefix, claimed), where, held);
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
  uint64_t held = 0;
  if (!j.is_object() || !j.contains("epochs")) return {parse_run_members(members, origin, held)};
  // Several epochs: each one's members prefixed "epoch<e>_", with their own meta.json.
  check_format(j, origin, kRunFormatVersionEpochs);
  const std::vector<int64_t> epochs =
      json_integers(j, "epochs", origin + ": meta.json", kMaxEpochs);
  if (epochs.empty()) fail(origin, "meta.json: 'epochs' is empty");
  std::set<std::string> claimed = {"meta.json"};
  std::vector<RunFile> out;
  for (size_t k = 0; k < epochs.size(); ++k) {
    if (k > 0 && epochs[k] <= epochs[k - 1])
      fail(origin, "meta.json: 'epochs' is not strictly increasing");
    const std::map<std::string, std::string> mine =
        members_under(members, epoch_prefix(epochs[k]), claimed);
    const std::string where = origin + ": epoch " + std::to_string(epochs[k]);
    RunFile run = parse_run_members(mine, where, held);
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

bool evaluation_before(const RunMetadata& a, const RunMetadata& b) {
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
    const RunMetadata& m = epochs[k].meta;
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
    out.emplace_back("meta.json", json_text(top, 2));
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
  out.emplace_back("meta.json", json_text(top, 2));
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
    j = parse_json(archive.read("meta.json"), path + ": meta.json");
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

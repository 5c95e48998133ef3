#include "core/runfile/import.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <set>
#include <tuple>
#include <unordered_set>

#include "core/dataset/dataset_spec.h"
#include "core/dataset/labels.h"
#include "core/dataset/predictions_file.h"
#include "core/io/csv.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"
#include "shardlens/dump_format.h"

namespace shardlens {
namespace {

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw InputError(origin + ": " + what);
}

// Each array's names (its own, then the aliases users' code spells it with), from the dump
// format's schema (shardlens/dump_format.h).
const std::map<std::string, std::vector<std::string>>& aliases() {
  static const std::map<std::string, std::vector<std::string>> table = [] {
    std::map<std::string, std::vector<std::string>> out;
    for (const dump_format::ArraySpec& a : dump_format::arrays()) out[a.name] = a.names;
    return out;
  }();
  return table;
}

static_assert(dump_format::kFlagPadding == kPadding && dump_format::kFlagSanity == kSanity,
              "the schema's flag bits are the records' (core/vocabulary/records.h)");

// The arrays of one shape in the schema, e.g. every one-number array.
std::vector<std::string> arrays_shaped(dump_format::ArrayShape shape) {
  std::vector<std::string> out;
  for (const dump_format::ArraySpec& a : dump_format::arrays())
    if (a.shape == shape) out.push_back(a.name);
  return out;
}

// The array given for `key` under any of its names (null when none); *name says which.
const DumpArray* find(const DumpArrays& arrays, const std::string& key, const std::string& origin,
                      std::string* name_found = nullptr) {
  const DumpArray* found = nullptr;
  std::string found_name;
  for (const std::string& name : aliases().at(key)) {
    auto it = arrays.find(name);
    if (it == arrays.end()) continue;
    if (found) fail(origin, "both '" + found_name + "' and '" + name + "' given for " + key);
    found = &it->second;
    found_name = name;
  }
  if (found && name_found) *name_found = "array '" + found_name + "'";
  return found;
}

std::vector<int64_t> integers_of(const DumpArray& a, const std::string& name,
                                 const std::string& origin) {
  if (a.integral) return a.ints;
  std::vector<int64_t> out(a.reals.size());
  for (size_t i = 0; i < a.reals.size(); ++i) {
    const double v = a.reals[i];
    if (!(v == std::floor(v)) || std::fabs(v) > 9e15)
      fail(origin, "'" + name + "' holds the non-integer value " + std::to_string(v) + " at " +
                       std::to_string(i));
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

std::optional<int64_t> scalar(const DumpArrays& arrays, const std::string& key,
                              const std::string& origin, int64_t lo, int64_t hi) {
  const DumpArray* a = find(arrays, key, origin);
  if (!a) return std::nullopt;  // one value: check_dump_shapes
  const int64_t v = integers_of(*a, key, origin)[0];
  if (v < lo || v > hi) fail(origin, "'" + key + "' = " + std::to_string(v) + " is out of range");
  return v;
}

// A C x C array (its shape checked by check_dump_shapes) as a matrix of finite values.
Matrix matrix_of(const DumpArray& a, const std::string& name, const std::string& origin) {
  Matrix m;
  m.classes = static_cast<int32_t>(a.shape[0]);
  if (a.integral) {
    m.cells.assign(a.ints.begin(), a.ints.end());
  } else {
    m.cells = a.reals;
  }
  check_counts(m, origin, name, Overflow::Refused,
               name == "reported" ? Fractions::Kept : Fractions::Refused);
  return m;
}

// How to name a subset of the dataset when a run evaluated one.
std::string subset_hint(const std::string& dataset, std::optional<int64_t> size = std::nullopt) {
  const std::string n = size ? std::to_string(*size) : std::string("N");
  return "; if the run evaluated a subset, give --dataset " + dataset + ",first=" + n +
         " (the first " + n + " samples) or " + dataset + ",indices=FILE.npy (the ones listed)";
}

// A --predictions file as a predictor spec (by extension: .csv, else .npy).
std::string predictions_spec(const std::string& path) {
  const bool csv = path.size() > 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  return (csv ? "csv:" : "npy:") + path;
}

// The number a file name's stem gives after a word ("eval_epoch2_rank3.npz": epoch 2,
// rank 3), for a dump without the array. `pattern` captures the digits.
std::optional<int64_t> number_in_name(const std::string& path, const std::regex& pattern) {
  const std::string stem = std::filesystem::path(path).stem().string();
  std::smatch match;
  if (!std::regex_search(stem, match, pattern)) return std::nullopt;
  return std::stoll(match[1].str());
}

std::optional<int64_t> epoch_from_name(const std::string& path) {
  static const std::regex pattern("epoch[_-]?([0-9]{1,9})", std::regex::icase);
  return number_in_name(path, pattern);
}

std::optional<int> rank_from_name(const std::string& path) {
  static const std::regex pattern("rank[_-]?([0-9]{1,5})", std::regex::icase);
  const std::optional<int64_t> rank = number_in_name(path, pattern);
  return rank ? std::optional<int>(int(*rank)) : std::nullopt;
}

// Argmax over each row of [N, C] scores as torch.argmax and numpy.argmax take it: the first
// maximum, and NaN above every number (a row holding NaN predicts its first NaN; skipping
// NaN predicted another class than the run's own argmax did).
std::vector<int64_t> argmax_rows(const DumpArray& a, const std::string& origin) {
  const int64_t n = a.shape[0], c = a.shape[1];
  if (c < 1) fail(origin, "'prediction' scores have no classes");
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t k = 1; k < c; ++k) {
      const size_t at = size_t(i * c + k), at_best = size_t(i * c + best);
      const double v = a.integral ? double(a.ints[at]) : a.reals[at];
      const double b = a.integral ? double(a.ints[at_best]) : a.reals[at_best];
      if (std::isnan(b)) break;  // nothing is above the first NaN
      if (v > b || std::isnan(v)) best = k;
    }
    out[size_t(i)] = best;
  }
  return out;
}

// Values an array holds, from its shape (the same as size() once its values are read).
uint64_t shape_count(const DumpArray& a) {
  uint64_t n = 1;
  for (int64_t d : a.shape) n *= uint64_t(d);  // checked by the readers
  return n;
}

// Every check on the arrays' shapes, the one place that makes them: run on the .npy headers
// of an .npz before any data is inflated, so an array that disagrees with the others costs
// nothing however large it claims to be, and by dump_from_arrays on arrays read whole.
void check_dump_shapes(const DumpArrays& arrays, const std::string& origin) {
  const DumpArray* index = find(arrays, "index", origin);
  const DumpArray* target = find(arrays, "target", origin);
  const DumpArray* prediction = find(arrays, "prediction", origin);
  if (!index || !target || !prediction) {
    fail(origin, "a dump needs arrays 'index', 'target' and 'prediction' (missing: " +
                     std::string(!index ? "index " : "") + (!target ? "target " : "") +
                     (!prediction ? "prediction" : "") + ")");
  }
  if (index->shape.size() != 1) fail(origin, "'index' is not a 1-D array");
  if (target->shape.size() != 1) fail(origin, "'target' is not a 1-D array");
  const uint64_t n = shape_count(*index);
  uint64_t preds = 0;
  if (prediction->shape.size() == 2 && !prediction->integral) {
    if (uint64_t(prediction->shape[0]) != n)
      fail(origin, "'prediction' scores do not have one row per index");
    preds = n;
  } else if (prediction->shape.size() == 1) {
    preds = shape_count(*prediction);
  } else {
    fail(origin, "'prediction' must be 1-D class ids or 2-D float scores");
  }
  if (shape_count(*target) != n || preds != n) {
    fail(origin, "index, target and prediction have different lengths (" + std::to_string(n) +
                     ", " + std::to_string(shape_count(*target)) + ", " + std::to_string(preds) +
                     ")");
  }
  // Every other one-value-per-record array of the schema (flags, ...).
  static const std::vector<std::string> per_record =
      arrays_shaped(dump_format::ArrayShape::Records);
  for (const std::string& key : per_record) {
    const DumpArray* a = find(arrays, key, origin);
    if (a && key != "index" && key != "target" && shape_count(*a) != n)
      fail(origin, "'" + key + "' has " + std::to_string(shape_count(*a)) + " entries for " +
                       std::to_string(n) + " records");
  }
  if (const DumpArray* r = find(arrays, "rank", origin)) {
    const uint64_t count = shape_count(*r);
    if (count != n && !(count == 1 && n != 1))
      fail(origin, "'rank' is neither one number nor one per record");
  }
  static const std::vector<std::string> scalars = arrays_shaped(dump_format::ArrayShape::Scalar);
  for (const std::string& key : scalars) {
    if (const DumpArray* a = find(arrays, key, origin); a && shape_count(*a) != 1)
      fail(origin, "'" + key + "' must be a single number");
  }
  if (const DumpArray* a = find(arrays, "settings_json", origin);
      a && (a->shape.size() != 1 || !a->integral))
    fail(origin, "'settings_json' is not a 1-D uint8 array of UTF-8 JSON");
  static const std::vector<std::string> matrices = arrays_shaped(dump_format::ArrayShape::Matrix);
  for (const std::string& key : matrices) {
    const DumpArray* a = find(arrays, key, origin);
    if (a && (a->shape.size() != 2 || a->shape[0] != a->shape[1] || a->shape[0] < 1 ||
              a->shape[0] > kMaxClasses))
      fail(origin, "'" + key + "' is not a square C x C matrix");
  }
}

// Every array holds the values its shape says (true of arrays read from .npy; checked for
// any other source), so the shape checks above hold for the values too.
void check_values_fill_shapes(const DumpArrays& arrays, const std::string& origin) {
  for (const auto& [name, a] : arrays) {
    if (uint64_t(a.size()) != shape_count(a))
      fail(origin, "'" + name + "' holds " + std::to_string(a.size()) + " values for " +
                       std::to_string(shape_count(a)) + " in its shape");
  }
}

// What reading the arrays into a dump takes: each array's values as 64-bit numbers and the
// integer copy made of them, then one record (and its rank) per index.
uint64_t dump_memory(const DumpArrays& arrays, const std::string& origin) {
  uint64_t bytes = 0;
  for (const auto& [name, a] : arrays) bytes += shape_count(a) * 8 * 2;
  const DumpArray* index = find(arrays, "index", origin);
  const uint64_t n = index ? shape_count(*index) : 0;
  return bytes + n * (2 * sizeof(Record) + sizeof(int));
}

DumpArray array_from_npy(const std::string& bytes, const std::string& origin) {
  const NpyHeader header = parse_npy_header(bytes, origin);
  DumpArray a;
  const char kind = header.descr.size() >= 2 ? header.descr[1] : '?';
  if (kind == 'f') {
    a.integral = false;
    a.reals = npy_doubles_from_bytes(bytes, origin, &a.shape);
  } else {
    a.ints = npy_integers_from_bytes(bytes, origin, &a.shape);
  }
  return a;
}

// A dump's records from its columns, each checked to fit a Record (RecordBounds::storable):
// the one loop every dump format ends in. `flags` may be empty (no flags).
void append_records(RankDump& d, const RecordSite& site, const std::vector<int64_t>& ranks,
                    const std::vector<int64_t>& index, const std::vector<int64_t>& target,
                    const std::vector<int64_t>& prediction, const std::vector<int64_t>& flags) {
  const RecordBounds storable = RecordBounds::storable();
  const size_t n = index.size();
  d.ranks.reserve(n);
  d.records.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t fl = flags.empty() ? 0 : flags[i];
    check_record_bounds(storable, site, int64_t(i), ranks[i], index[i], target[i], prediction[i],
                        fl);
    d.ranks.push_back(static_cast<int>(ranks[i]));
    d.records.push_back(Record{index[i], static_cast<int32_t>(target[i]),
                               static_cast<int32_t>(prediction[i]), static_cast<uint8_t>(fl)});
  }
  d.record_keys = site.keys;
}

// A table whose columns are rank, index, target, prediction [, flags] (.npy and .csv);
// site.keys name the columns.
RankDump dump_from_columns(const std::vector<std::vector<int64_t>>& columns,
                           const RecordSite& site) {
  RankDump d;
  d.origin = site.origin;
  static const std::vector<int64_t> kNoFlags;
  append_records(d, site, columns[0], columns[1], columns[2], columns[3],
                 columns.size() > 4 ? columns[4] : kNoFlags);
  return d;
}

// The settings_json array as text: one byte per value.
std::string settings_text(const DumpArray& a, const std::string& origin) {
  std::string text;
  text.reserve(a.ints.size());
  for (int64_t v : a.ints) {
    if (v < 0 || v > 255) fail(origin, "'settings_json' holds a value that is not a byte");
    text.push_back(static_cast<char>(v));
  }
  return text;
}

// A setting given both as an array and in settings_json: they must agree. Returns either.
template <class T>
std::optional<T> agreed(std::optional<T> array, std::optional<T> recorded, const char* key,
                        const std::string& origin) {
  if (array && recorded && *array != *recorded)
    fail(origin, std::string("'") + key + "' disagrees with settings_json's '" + key + "'");
  return array ? array : recorded;
}

// Every per-dump setting, from its array or else settings_json: the one place that reads them.
void read_evaluation_keys(const DumpArrays& arrays, const std::string& origin, RankDump& d) {
  if (const DumpArray* a = find(arrays, "settings_json", origin))
    d.settings = parse_recorded_settings(settings_text(*a, origin), origin);
  const RecordedSettings s = d.settings.value_or(RecordedSettings{});
  if (s.world_size && (*s.world_size < 1 || *s.world_size > kMaxWorldSize))
    fail(origin,
         "settings_json: 'world_size' = " + std::to_string(*s.world_size) + " is out of range");
  const auto world = agreed(scalar(arrays, "world_size", origin, 1, kMaxWorldSize), s.world_size,
                            "world_size", origin);
  if (world) d.world_size = int(*world);
  d.dataset_size = agreed(scalar(arrays, "dataset_size", origin, 0, INT64_MAX), s.dataset_size,
                          "dataset_size", origin);
  d.epoch = agreed(scalar(arrays, "epoch", origin, 0, INT64_MAX), s.epoch, "epoch", origin);
  std::optional<bool> sanity;
  if (auto v = scalar(arrays, "sanity", origin, 0, 1)) sanity = *v == 1;
  d.sanity = agreed(sanity, s.sanity, "sanity", origin).value_or(false);
  d.batch_size = agreed(scalar(arrays, "batch_size", origin, 1, INT64_MAX), s.batch_size,
                        "batch_size", origin);
  d.validation_in_epoch = agreed(scalar(arrays, "validation_in_epoch", origin, 0, INT32_MAX),
                                 s.validation_in_epoch, "validation_in_epoch", origin);
  d.dataloader_idx = agreed(scalar(arrays, "dataloader_idx", origin, 0, INT32_MAX),
                            s.dataloader_idx, "dataloader_idx", origin);
  if (d.validation_in_epoch && *d.validation_in_epoch > INT32_MAX)
    fail(origin, "'validation_in_epoch' is out of range");
  if (d.dataloader_idx && *d.dataloader_idx > INT32_MAX)
    fail(origin, "'dataloader_idx' is out of range");
  d.stage = s.stage.value_or("");
  if (s.rank) {
    for (int r : d.ranks)
      if (r != *s.rank)
        fail(origin, "holds rank " + std::to_string(r) + " but settings_json says rank " +
                         std::to_string(*s.rank));
  }
}

// A dump of a newer format than this build reads is refused before anything else is checked:
// its other arrays may mean something else. Absent: version 1.
void check_dump_version(const DumpArray& version, const std::string& origin) {
  if (version.size() != 1) fail(origin, "'format_version' must be a single number");
  const int64_t v = integers_of(version, "format_version", origin)[0];
  if (v < 1) fail(origin, "'format_version' = " + std::to_string(v) + " is not a format version");
  if (v > dump_format::kVersion)
    fail(origin, "dump format version " + std::to_string(v) +
                     " is newer than this ShardLens reads (" +
                     std::to_string(dump_format::kVersion) + "); update ShardLens");
}

}  // namespace

RankDump dump_from_arrays(const DumpArrays& arrays, const std::string& origin) {
  if (auto it = arrays.find("format_version"); it != arrays.end())
    check_dump_version(it->second, origin);
  // The shapes, as for an .npz before its data is read, then that the values fill them (a
  // .pt arrives whole): past these two, every length agrees.
  check_dump_shapes(arrays, origin);
  check_values_fill_shapes(arrays, origin);
  RankDump d;
  d.origin = origin;
  RecordSite site{origin, {}};
  auto key = [&](RecordField f) { return &site.keys[size_t(f)]; };
  const DumpArray* index = find(arrays, "index", origin, key(RecordField::Index));
  const DumpArray* target = find(arrays, "target", origin, key(RecordField::Target));
  const DumpArray* prediction = find(arrays, "prediction", origin, key(RecordField::Prediction));
  const size_t n = static_cast<size_t>(index->size());
  const std::vector<int64_t> preds = prediction->shape.size() == 2
                                         ? argmax_rows(*prediction, origin)
                                         : integers_of(*prediction, "prediction", origin);
  std::vector<int64_t> flags;
  if (const DumpArray* f = find(arrays, "flags", origin, key(RecordField::Flags)))
    flags = integers_of(*f, "flags", origin);
  std::vector<int64_t> ranks;
  if (const DumpArray* r = find(arrays, "rank", origin, key(RecordField::Rank))) {
    ranks = integers_of(*r, "rank", origin);
    if (ranks.size() == 1 && n != 1) ranks.assign(n, ranks[0]);
  } else {
    const auto from_name = rank_from_name(origin);
    if (!from_name)
      fail(origin,
           "no 'rank' array, and the file name does not say the rank (e.g. dump_rank0.npz)");
    ranks.assign(n, *from_name);
    *key(RecordField::Rank) = "the file name";
  }
  append_records(d, site, ranks, integers_of(*index, "index", origin),
                 integers_of(*target, "target", origin), preds, flags);
  read_evaluation_keys(arrays, origin, d);
  if (const DumpArray* m = find(arrays, "matrix", origin)) {
    std::set<int> distinct(d.ranks.begin(), d.ranks.end());
    if (distinct.size() > 1) fail(origin, "'matrix' given in a dump that holds several ranks");
    d.rank_matrix = matrix_of(*m, "matrix", origin);
  }
  if (const DumpArray* m = find(arrays, "reported", origin))
    d.reported = matrix_of(*m, "reported", origin);
  return d;
}

RankDump read_npz_dump(const std::string& path) {
  NpzArchive archive = NpzArchive::open_file(path);
  // Every array's header first (a few bytes each, sizes checked against the members), so
  // arrays that disagree, or a dump too large for the memory budget, are refused before
  // any data is inflated.
  DumpArrays arrays;
  std::vector<std::string> names;
  for (const NpzEntry& e : archive.entries()) {
    if (!e.name.ends_with(".npy")) continue;  // e.g. meta.json
    const NpyHeader h = archive.npy_header(e.name);
    DumpArray& a = arrays[e.name.substr(0, e.name.size() - 4)];
    a.shape = h.shape;
    a.integral = !(h.descr.size() >= 2 && h.descr[1] == 'f');
    names.push_back(e.name);
  }
  if (auto it = arrays.find("format_version"); it != arrays.end() && it->second.shape.empty())
    check_dump_version(array_from_npy(archive.read("format_version.npy"), path), path);
  check_dump_shapes(arrays, path);
  check_load_budget(path, dump_memory(arrays, path), "its arrays and the records built from them");
  for (const std::string& name : names) {
    const std::string where = path + ": member " + name;
    arrays[name.substr(0, name.size() - 4)] = array_from_npy(archive.read(name), where);
  }
  return dump_from_arrays(arrays, path);
}

RankDump read_npy_dump(const std::string& path) {
  const std::string bytes = read_file_bytes(path);
  const NpyHeader header = parse_npy_header(bytes, path);
  // The values as int64, one column each, then the records (its size is checked against
  // the file's by the reader below; this bounds what is built from it).
  const uint64_t values_count = npy_value_count(header);
  const uint64_t rows = header.shape.empty() ? 1 : uint64_t(header.shape[0]);
  check_load_budget(path, bytes.size() + values_count * 16 + rows * (2 * sizeof(Record) + 4),
                    "its values as 64-bit integers and the records built from them");
  std::vector<int64_t> shape;
  const auto values = npy_integers_from_bytes(bytes, path, &shape);
  if (shape.size() != 2 || (shape[1] != 4 && shape[1] != 5)) {
    fail(path,
         "a .npy dump must be an integer array [N, 4] or [N, 5] with columns rank, index, "
         "target, prediction [, flags]");
  }
  const size_t n = size_t(shape[0]), w = size_t(shape[1]);
  std::vector<std::vector<int64_t>> columns(w, std::vector<int64_t>(n));
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < w; ++k) columns[k][i] = values[i * w + k];
  }
  RecordSite site{path, {}};
  for (size_t k = 0; k < w; ++k) site.keys[k] = "column " + std::to_string(k);
  return dump_from_columns(columns, site);
}

RankDump read_csv_dump(const std::string& path) {
  const CsvTable table = read_csv(path);
  std::vector<std::vector<int64_t>> columns;
  RecordSite site{path, {}};
  const std::vector<std::string> keys = {"rank", "index", "target", "prediction", "flags"};
  if (table.header.empty()) {
    const size_t width = table.rows.empty() ? 0 : table.rows[0].size();
    if (width != 4 && width != 5)
      fail(path,
           "without a header a dump needs 4 or 5 columns: rank, index, target, prediction [, "
           "flags]");
    for (size_t k = 0; k < width; ++k) {
      CsvTable single;
      single.lines = table.lines;
      for (const auto& row : table.rows) single.rows.push_back({row[k]});
      columns.push_back(csv_integer_column(single, {}, path));
      site.keys[k] = "column " + std::to_string(k + 1);
    }
  } else {
    for (const std::string& key : keys) {
      std::vector<std::string> names = aliases().at(key);
      std::string present;
      for (const auto& name : names) {
        if (table.column(name) < 0) continue;
        // Two columns for one field: which one the run meant cannot be told (as in an .npz).
        if (!present.empty())
          fail(path, "both column '" + present + "' and column '" + name + "' given for " + key);
        present = name;
      }
      if (present.empty()) {
        if (key == "flags") break;
        fail(path, "no '" + key + "' column (the header needs rank, index, target, prediction)");
      }
      site.keys[columns.size()] = "column '" + present + "'";
      columns.push_back(csv_integer_column(table, names, path));
    }
  }
  if (columns.empty() || columns[0].empty()) fail(path, "no records");
  return dump_from_columns(columns, site);
}

namespace {

// A dump without records reads as an exact evaluation of nothing: refused, naming each.
void refuse_empty_dumps(const std::vector<RankDump>& dumps) {
  std::string empty;  // one line, every empty file named
  for (const RankDump& d : dumps)
    if (d.records.empty()) empty += (empty.empty() ? "" : "; ") + d.origin + ": holds no records";
  if (empty.empty()) return;
  throw InputError(empty +
                   " (index, target and prediction are empty). Hint: the recorder could not "
                   "read validation_step's output: return a dict with index, target and "
                   "prediction, or tell ShardLensCallback its keys");
}

std::vector<RankDump> read_dumps(const std::vector<std::string>& paths,
                                 const ImportOptions& options, Progress* progress) {
  if (paths.empty()) throw InputError("import: no dump files given");
  std::vector<RankDump> dumps;
  for (size_t i = 0; i < paths.size(); ++i) {
    step(progress, "reading dumps", double(i) / double(paths.size()));
    const std::string& path = paths[i];
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (ext == ".npz") {
      dumps.push_back(read_npz_dump(path));
    } else if (ext == ".npy") {
      dumps.push_back(read_npy_dump(path));
    } else if (ext == ".csv") {
      dumps.push_back(read_csv_dump(path));
    } else if (ext == ".pt" || ext == ".pth") {
      if (!options.pt_reader)
        fail(path,
             ".pt dumps need LibTorch, which this build of ShardLens does not have; save the dump "
             "as .npz");
      dumps.push_back(dump_from_arrays(options.pt_reader(path), path));
    } else {
      fail(path, "unknown dump format '" + ext + "' (expected .npz, .npy, .csv or .pt)");
    }
  }
  step(progress, "reading dumps", 1.0);
  refuse_empty_dumps(dumps);
  for (RankDump& d : dumps)
    if (!d.epoch) d.epoch = epoch_from_name(d.origin);
  return dumps;
}

}  // namespace

RunFile import_dumps(const std::vector<std::string>& paths, const ImportOptions& options,
                     Progress* progress) {
  return import_dumps(read_dumps(paths, options, progress), options);
}

namespace {

// What every dump of one evaluation recorded about it, into the run's meta: the ranks must
// agree (their settings but the rank, their epoch, stage, validation, dataloader, dataset size).
void carry_evaluation_settings(const std::vector<RankDump>& dumps, RunMetadata& m) {
  const RankDump* first = nullptr;
  for (const RankDump& d : dumps) {
    if (!first) {
      first = &d;
      continue;
    }
    auto disagree = [&](const std::string& what) {
      fail(d.origin, what + " disagrees with " + first->origin + "'s");
    };
    if (d.settings && first->settings) {
      std::string key;
      if (!same_evaluation_settings(*d.settings, *first->settings, &key))
        disagree("settings_json '" + key + "'");
    } else if (d.settings.has_value() != first->settings.has_value()) {
      disagree(std::string("settings_json (") + (d.settings ? "given" : "absent") + ")");
    }
    if (d.epoch != first->epoch) disagree("the epoch");
    if (d.stage != first->stage) disagree("the stage");
    if (d.validation_in_epoch != first->validation_in_epoch) disagree("validation_in_epoch");
    if (d.dataloader_idx != first->dataloader_idx) disagree("dataloader_idx");
    if (d.dataset_size && first->dataset_size && *d.dataset_size != *first->dataset_size)
      disagree("dataset_size " + std::to_string(*d.dataset_size));
  }
  if (!first) return;
  m.recorded = first->settings;
  // The torch the user's run used is the run's torch version: it chooses the semantics
  // a re-simulation imitates (TorchVersion::parse_recorded reads it when a run is opened).
  if (m.torch_version.empty() && m.recorded) {
    if (auto it = m.recorded->versions.find("torch"); it != m.recorded->versions.end())
      m.torch_version = it->second;
  }
  m.stage = first->stage;
  m.validation_in_epoch = first->validation_in_epoch;
  m.dataloader_idx = first->dataloader_idx;
}

// Which evaluation of a run a dump belongs to, in run order (evaluation_before's).
using EvaluationKey = std::tuple<int64_t, int, int64_t, int64_t, std::string>;
EvaluationKey key_of(const RankDump& d) {
  const bool validate = d.stage.empty() || d.stage == "validate";
  const int stage = validate ? 0 : d.stage == "test" ? 1 : 2;
  return {d.epoch.value_or(0), stage, d.validation_in_epoch.value_or(-1),
          d.dataloader_idx.value_or(-1), validate ? std::string() : d.stage};
}

}  // namespace

ImportedRun import_epochs(const std::vector<std::string>& paths, const ImportOptions& options,
                          Progress* progress) {
  std::vector<RankDump> dumps = read_dumps(paths, options, progress);
  ImportedRun out;
  // A Lightning sanity check is not part of an epoch's metric (Lightning resets the metric
  // after it); it is kept apart by the recorder and left out here.
  size_t sanity = 0;
  std::erase_if(dumps, [&](const RankDump& d) { return d.sanity && ++sanity; });
  if (sanity > 0)
    out.notes.push_back("left out " + std::to_string(sanity) +
                        " sanity-check dump(s): the sanity check is not part of an epoch's metric");
  if (dumps.empty()) throw InputError("import: only sanity-check dumps were given");
  std::string with, without;  // a dump that names its epoch, one that does not
  int64_t with_epoch = 0;
  // Validation and dataloader numbers tell evaluations apart only when there are several.
  std::set<int64_t> validations, loaders;
  for (const RankDump& d : dumps) {
    validations.insert(d.validation_in_epoch.value_or(0));
    loaders.insert(d.dataloader_idx.value_or(0));
  }
  std::map<EvaluationKey, std::vector<RankDump>> groups;
  for (RankDump& d : dumps) {
    if (d.epoch) {
      with = d.origin;
      with_epoch = *d.epoch;
    } else {
      without = d.origin;
    }
    if (validations.size() < 2) d.validation_in_epoch.reset();
    if (loaders.size() < 2) d.dataloader_idx.reset();
    groups[key_of(d)].push_back(std::move(d));
  }
  if (!with.empty() && !without.empty())
    fail(without, "names no epoch, but " + with + " does (epoch " + std::to_string(with_epoch) +
                      "); give every dump its epoch");
  for (auto& [key, group] : groups) {
    step(progress, "importing evaluations", double(out.epochs.size()) / double(groups.size()));
    RunFile run = import_dumps(group, options);
    if (!with.empty()) run.meta.epoch = group.front().epoch;
    if (groups.size() > 1 && !run.meta.epoch) run.meta.epoch = 0;
    out.epochs.push_back(std::move(run));
  }
  return out;
}

namespace {

// A dump's rank beyond the world size: one wording, whether the rank came from its records
// or from its file name.
[[noreturn]] void rank_outside_world(const std::string& origin, int rank, int world) {
  fail(origin,
       "rank " + std::to_string(rank) + " is outside the world size " + std::to_string(world));
}

// World size: declared by the dumps (they must agree), by the user, or the largest rank.
int decide_world_size(const std::vector<RankDump>& dumps, const ImportOptions& options) {
  std::optional<int> world = options.world_size;
  std::string world_origin = "--world-size";
  int max_rank = -1;
  std::string max_rank_origin;  // the dump that holds it
  for (const RankDump& d : dumps) {
    if (d.world_size) {
      if (world && *world != *d.world_size) {
        fail(d.origin, "world size " + std::to_string(*d.world_size) + " disagrees with " +
                           world_origin + " (" + std::to_string(*world) + ")");
      }
      world = d.world_size;
      world_origin = d.origin;
    }
    for (int r : d.ranks) {
      if (r <= max_rank) continue;
      max_rank = r;
      max_rank_origin = d.origin;
    }
  }
  const int w = world ? *world : max_rank + 1;
  if (w < 1) throw InputError("import: the dumps hold no records and do not say the world size");
  if (max_rank >= w) rank_outside_world(max_rank_origin, max_rank, w);
  return w;
}

// Which dump holds each rank, and the matrices the dumps give for it.
struct RankOwners {
  std::vector<std::string> owner;               // the file of each rank's records
  std::vector<std::optional<Matrix>> provided;  // the rank's own accumulated matrix
  // What each rank reported itself: a dump's `reported` is its (lowest) rank's.
  std::vector<std::optional<Matrix>> reported;
};

// The dumps' records into the run, by rank. Each rank's records come from exactly one file,
// so a dump given twice is not merged.
RankOwners merge_ranks(const std::vector<RankDump>& dumps, int w, RunFile& run) {
  RankOwners o;
  o.owner.resize(size_t(w));
  o.provided.resize(size_t(w));
  o.reported.resize(size_t(w));
  run.records.ranks.resize(size_t(w));
  for (const RankDump& d : dumps) {
    std::set<int> mine(d.ranks.begin(), d.ranks.end());
    if (d.ranks.empty() && (d.rank_matrix || d.reported)) {
      if (auto r = rank_from_name(d.origin)) mine.insert(*r);
    }
    if (d.reported && !mine.empty() && *mine.begin() < w)
      o.reported[size_t(*mine.begin())] = d.reported;
    for (int r : mine) {
      if (r >= w) rank_outside_world(d.origin, r, w);
      if (!o.owner[size_t(r)].empty())
        fail(d.origin, "rank " + std::to_string(r) + " also appears in " + o.owner[size_t(r)]);
      o.owner[size_t(r)] = d.origin;
      if (d.rank_matrix) o.provided[size_t(r)] = d.rank_matrix;
    }
    for (size_t i = 0; i < d.records.size(); ++i)
      run.records.ranks[size_t(d.ranks[i])].push_back(d.records[i]);
    if (d.batch_size) run.meta.batch_size = d.batch_size;
  }
  return o;
}

// What the dataset says, when given: its labels and (--predictions) every prediction.
struct DatasetTruth {
  std::optional<Labels> labels;
  std::optional<std::vector<int32_t>> predictions;
};

DatasetTruth load_truth(const ImportOptions& options) {
  DatasetTruth t;
  if (!options.dataset.empty()) t.labels = load_labels(options.dataset);
  // One prediction per dataset index: every prediction is known, so is the expected matrix.
  if (!options.predictions.empty()) {
    if (!t.labels) throw InputError("--predictions: needs --dataset (the labels they predict)");
    t.predictions = read_predictions_file(
        parse_spec(predictions_spec(options.predictions), "--predictions"), *t.labels);
  }
  return t;
}

// The class count and, when it was inferred from the values, the dump that implied it.
struct ClassCount {
  int32_t classes = 0;
  std::string origin;
};

// The class count the values imply: the largest class id (or matrix) of any dump.
ClassCount classes_from_values(const std::vector<RankDump>& dumps, int ignore_index) {
  ClassCount out;
  int64_t top = 0;
  auto raise = [&](int64_t count, const RankDump& d) {
    if (count > top) {
      top = count;
      out.origin = d.origin;
    }
  };
  for (const RankDump& d : dumps) {
    for (const Record& rec : d.records) {
      // In 64 bits: a target of INT32_MAX + 1 overflows int.
      if (rec.target != ignore_index) raise(int64_t(rec.target) + 1, d);
      raise(int64_t(rec.prediction) + 1, d);
    }
    if (d.reported) raise(d.reported->classes, d);
    if (d.rank_matrix) raise(d.rank_matrix->classes, d);
  }
  if (top < 1 || top > kMaxClasses)
    throw InputError("import: cannot tell the number of classes; give --classes");
  out.classes = static_cast<int32_t>(top);
  return out;
}

// Classes: the dataset's, the user's, the recorder's, or what the records and matrices show.
ClassCount decide_classes(const std::vector<RankDump>& dumps, const ImportOptions& options,
                          const DatasetTruth& truth, const RunMetadata& m) {
  ClassCount out;
  out.classes = options.classes.value_or(0);
  if (options.classes && (out.classes < 1 || out.classes > kMaxClasses))
    throw InputError("import: --classes " + std::to_string(out.classes) + " is out of range [1, " +
                     std::to_string(kMaxClasses) + "]");
  if (truth.labels) {
    if (out.classes && out.classes != truth.labels->num_classes)
      throw InputError("import: --classes " + std::to_string(out.classes) +
                       " disagrees with the dataset's " +
                       std::to_string(truth.labels->num_classes));
    out.classes = truth.labels->num_classes;
  }
  // The recorder's num_classes (the metric's): a class no record shows still counts.
  if (!out.classes && m.recorded && m.recorded->num_classes) {
    if (*m.recorded->num_classes < 1 || *m.recorded->num_classes > kMaxClasses)
      fail(dumps.front().origin, "settings_json: 'num_classes' = " +
                                     std::to_string(*m.recorded->num_classes) + " is out of range");
    out.classes = static_cast<int32_t>(*m.recorded->num_classes);
  }
  if (!out.classes) out = classes_from_values(dumps, options.ignore_index);
  return out;
}

// One C x C matrix per rank plus the synced one. A single large class id in a small dump
// implies C, so the memory is bounded before anything is allocated.
void check_matrix_memory(const ClassCount& c, int w) {
  const int32_t classes = c.classes;
  const uint64_t cells = uint64_t(classes) * uint64_t(classes);
  if (cells > kMaxImportMatrixCells / uint64_t(w + 1)) {
    const std::string need =
        std::to_string(cells * uint64_t(w + 1) * sizeof(double) >> 20) + " MiB, more than the " +
        std::to_string(kMaxImportMatrixCells * sizeof(double) >> 20) + " MiB limit";
    const std::string shape = std::to_string(w + 1) + " matrices of " + std::to_string(classes) +
                              " x " + std::to_string(classes) + " (one per rank of " +
                              std::to_string(w) + ", and the synced one)";
    if (c.origin.empty())
      throw InputError("import: " + std::to_string(classes) + " classes need " + shape + ": " +
                       need);
    fail(c.origin, "class id " + std::to_string(classes - 1) + " implies " +
                       std::to_string(classes) + " classes, and " + shape + " would take " + need +
                       "; check the target and prediction values, or give --classes");
  }
}

// The evaluation the run makes (its records, the per-index arrays its dataset size sizes, a
// matrix per rank) against the memory budget, before the matrices or any per-index array is
// built. Named after what set the size that costs most: the dataset (--dataset), the dump that
// declared its size or holds the largest index, the dump whose class id implied the classes.
void check_import_memory(const std::vector<RankDump>& dumps, const ImportOptions& options,
                         const ClassCount& classes, const RunFile& run) {
  const RunMetadata& m = run.meta;
  EvaluationSize size{.samples = m.dataset_size, .classes = m.classes, .world_size = m.world_size};
  for (const auto& rank : run.records.ranks) size.records += int64_t(rank.size());
  EvaluationSize matrices = size;
  matrices.samples = 0;
  matrices.records = 0;
  std::string origin = classes.origin.empty() ? std::string("import") : classes.origin;
  if (evaluation_memory(matrices) < evaluation_memory(size) / 2) {
    // The dataset size dominates.
    const RankDump* declared = nullptr;
    const RankDump* largest = nullptr;
    int64_t top = -1;
    for (const RankDump& d : dumps) {
      if (!declared && d.dataset_size && *d.dataset_size == m.dataset_size) declared = &d;
      for (const Record& rec : d.records)
        if (rec.index > top) top = rec.index, largest = &d;
    }
    origin = !options.dataset.empty() ? std::string("--dataset")
             : declared               ? declared->origin
             : largest                ? largest->origin
                                      : origin;
  }
  check_evaluation_budget(origin, size);
}

// A record that lies within the run's bounds still has to agree with the dataset given.
void check_against_dataset(const RankDump& d, const RecordSite& site, size_t i,
                           const DatasetTruth& truth, const ImportOptions& options) {
  const Record& rec = d.records[i];
  auto place = [&](RecordField f) { return record_place(site, int64_t(i), d.ranks[i], f) + ": "; };
  if (truth.predictions && rec.prediction != (*truth.predictions)[size_t(rec.index)])
    throw InputError(place(RecordField::Prediction) + "prediction " +
                     std::to_string(rec.prediction) + " at dataset index " +
                     std::to_string(rec.index) + " but " + options.predictions + " says " +
                     std::to_string((*truth.predictions)[size_t(rec.index)]));
  const int32_t label = truth.labels->targets[size_t(rec.index)];
  if (rec.target != label && rec.target != options.ignore_index)
    throw InputError(place(RecordField::Target) + "target " + std::to_string(rec.target) +
                     " at dataset index " + std::to_string(rec.index) + " but the dataset says " +
                     std::to_string(label) +
                     " (wrong --dataset, or the dump's indices are not dataset indices)");
}

// Every dump against the run: its records within the run's bounds (and the dataset's), its
// dataset size and matrices fitting. Sets the declared dataset size.
void check_dumps(const std::vector<RankDump>& dumps, const DatasetTruth& truth,
                 const ImportOptions& options, RunMetadata& m) {
  const int32_t classes = m.classes;
  const std::optional<Labels>& labels = truth.labels;
  RecordBounds bounds =
      RecordBounds::of_run(classes, labels ? labels->size() : 0, options.ignore_index);
  if (labels) bounds.beyond_samples += subset_hint(options.dataset);
  for (const RankDump& d : dumps) {
    const RecordSite site{d.origin, d.record_keys};
    for (size_t i = 0; i < d.records.size(); ++i) {
      check_record_bounds(bounds, site, int64_t(i), d.ranks[i], d.records[i]);
      if (labels) check_against_dataset(d, site, i, truth, options);
    }
    if (d.dataset_size && labels && *d.dataset_size != labels->size())
      fail(d.origin, "dataset_size " + std::to_string(*d.dataset_size) + " but the dataset has " +
                         std::to_string(labels->size()) + " samples" +
                         subset_hint(options.dataset, *d.dataset_size));
    if (d.dataset_size) m.dataset_size = std::max(m.dataset_size, *d.dataset_size);
    for (const auto* mat :
         {d.reported ? &*d.reported : nullptr, d.rank_matrix ? &*d.rank_matrix : nullptr}) {
      if (mat && mat->classes != classes)
        fail(d.origin, "a " + std::to_string(mat->classes) + " x " + std::to_string(mat->classes) +
                           " matrix for " + std::to_string(classes) + " classes");
    }
  }
}

// True class counts: from the dataset, or estimated from the distinct samples seen (and the
// dataset size with them, when no dump declared it).
void count_classes(RunFile& run, const DatasetTruth& truth) {
  RunMetadata& m = run.meta;
  if (truth.labels) {
    m.class_counts = truth.labels->class_counts();
    m.class_names = truth.labels->class_names;
    m.dataset_size = truth.labels->size();
    m.class_counts_source = "dataset";
    return;
  }
  m.class_counts.assign(size_t(m.classes), 0);
  std::unordered_set<int64_t> seen;
  int64_t max_index = -1;
  for (const auto& rank : run.records.ranks) {
    for (const Record& rec : rank) {
      if (rec.target >= 0 && rec.target < m.classes && seen.insert(rec.index).second)
        ++m.class_counts[size_t(rec.target)];
      max_index = std::max(max_index, rec.index);
    }
  }
  const bool declared = m.dataset_size > 0;
  if (declared && max_index >= m.dataset_size)
    throw InputError("import: dataset index " + std::to_string(max_index) +
                     " beyond the declared dataset_size " + std::to_string(m.dataset_size));
  // Without a declared size, the dataset has at least max_index + 1 samples.
  if (!declared) m.dataset_size = max_index + 1;
  m.class_counts_source = "distinct-records";
}

// Every rank of the world has its dump (checked after the per-file checks, so a broken dump
// is reported as such, not as a gap).
void refuse_missing_ranks(const RankOwners& owners) {
  const size_t w = owners.owner.size();
  for (size_t r = 0; r < w; ++r) {
    if (owners.owner[r].empty())
      throw InputError("import: no dump holds rank " + std::to_string(r) + " (world size " +
                       std::to_string(w) + ")");
  }
}

// The run's matrices: per rank from the records unless a dump gave its own, the synced one
// as the lowest rank reported it (else the sum), the expected one when every prediction is
// known.
void build_matrices(RunFile& run, const RankOwners& owners, const DatasetTruth& truth,
                    int ignore_index) {
  const int32_t classes = run.meta.classes;
  run.per_rank = matrices_from_records(run.records, classes, ignore_index);
  // Listed, so a reader checks the other ranks' matrices against their records.
  run.meta.provided_matrices.emplace();
  for (size_t r = 0; r < owners.provided.size(); ++r) {
    if (!owners.provided[r]) continue;
    run.per_rank[r] = *owners.provided[r];
    run.meta.provided_matrices->push_back(int(r));
  }
  // The logged matrix is the lowest rank's report (rank 0's, as Lightning logs it); ranks that
  // report something else are kept for the diagnosis (`unsynced`).
  for (const std::optional<Matrix>& reported : owners.reported) {
    if (!reported) continue;
    if (!run.has_synced()) run.synced = *reported;
    run.reported_per_rank = owners.reported;
  }
  if (truth.predictions) {
    Matrix expected(classes);
    for (size_t i = 0; i < truth.predictions->size(); ++i)
      expected.at(truth.labels->targets[i], (*truth.predictions)[i]) += 1;
    run.expected = std::move(expected);
  }
  run.meta.synced_origin = run.has_synced() ? SyncedOrigin::Recorded : SyncedOrigin::SumOfRanks;
  if (!run.has_synced()) {
    run.synced = Matrix(classes);
    for (const Matrix& mat : run.per_rank) run.synced += mat;
  }
}

}  // namespace

RunFile import_dumps(const std::vector<RankDump>& dumps, const ImportOptions& options) {
  refuse_empty_dumps(dumps);
  RunFile run;
  RunMetadata& m = run.meta;
  m.source = "imported";
  m.backend = "import";
  m.ignore_index = options.ignore_index;
  carry_evaluation_settings(dumps, m);
  m.world_size = decide_world_size(dumps, options);
  const RankOwners owners = merge_ranks(dumps, m.world_size, run);
  const DatasetTruth truth = load_truth(options);
  m.dataset = options.dataset;
  const ClassCount classes = decide_classes(dumps, options, truth, m);
  check_matrix_memory(classes, m.world_size);
  m.classes = classes.classes;
  check_dumps(dumps, truth, options, m);
  count_classes(run, truth);
  check_import_memory(dumps, options, classes, run);
  refuse_missing_ranks(owners);
  build_matrices(run, owners, truth, options.ignore_index);
  validate_run(run, "import");
  return run;
}

}  // namespace shardlens

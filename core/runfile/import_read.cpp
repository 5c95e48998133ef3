#include "core/runfile/import_read.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "core/dataset/dataset_spec.h"
#include "core/dataset/predictions_file.h"
#include "core/io/csv.h"
#include "core/io/files.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/runfile/import_arrays.h"
#include "core/vocabulary/limits.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace dump_import {
namespace {

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
    if ((fl & dump_format::kFlagPadRow) != 0) {  // padding of a gather, not a sample
      ++d.pad_rows;
      continue;
    }
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

// The column of a CSV of cells holding each row's count, `count` or `cell_count` (nullopt
// when neither: a CSV of records).
std::optional<std::string> cell_column(const CsvTable& table, const std::string& path) {
  std::optional<std::string> present;
  for (const std::string name : {"count", "cell_count"}) {
    if (table.column(name) < 0) continue;
    if (present)
      fail(path, "both column '" + *present + "' and column '" + name + "' given for cell_count");
    present = name;
  }
  return present;
}

// A CSV whose `count` column makes every row one cell (rank, index, target, prediction
// [, flags] the record columns, read already), grouped into its records (dump_cells.h).
RankDump dump_from_cell_rows(const CsvTable& table,
                             const std::vector<std::vector<int64_t>>& columns, RecordSite site) {
  const std::string& path = site.origin;
  CellRows rows;
  rows.rank = columns[0];
  rows.index = columns[1];
  rows.target = columns[2];
  rows.prediction = columns[3];
  rows.flags = columns.size() > 4 ? columns[4] : std::vector<int64_t>(columns[0].size(), 0);
  const std::string count = *cell_column(table, path);
  rows.count = csv_integer_column(table, {count}, path);
  if (table.column("record") >= 0) rows.record = csv_integer_column(table, {"record"}, path);
  rows.lines = table.lines;
  rows.keys = {site.keys[size_t(RecordField::Target)], site.keys[size_t(RecordField::Prediction)],
               "column '" + count + "'"};
  GroupedCells grouped = group_cell_rows(rows, path);
  const std::vector<int64_t> zeros(grouped.rank.size(), 0);  // recomputed from the cells
  RankDump d;
  d.origin = path;
  append_records(d, site, grouped.rank, grouped.index, zeros, zeros, grouped.flags);
  drop_pad_rows(grouped.cells, grouped.flags);
  d.cells = std::move(grouped.cells);
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
  if (const DumpArray* a = find_field(arrays, "settings_json", origin))
    d.settings = parse_recorded_settings(settings_text(*a, origin), origin);
  const RecordedSettings s = d.settings.value_or(RecordedSettings{});
  if (s.world_size && (*s.world_size < 1 || *s.world_size > kMaxWorldSize))
    fail(origin,
         "settings_json: 'world_size' = " + std::to_string(*s.world_size) + " is out of range");
  const auto world = agreed(scalar_field(arrays, "world_size", origin, 1, kMaxWorldSize),
                            s.world_size, "world_size", origin);
  if (world) d.world_size = int(*world);
  d.dataset_size = agreed(scalar_field(arrays, "dataset_size", origin, 0, INT64_MAX),
                          s.dataset_size, "dataset_size", origin);
  d.epoch = agreed(scalar_field(arrays, "epoch", origin, 0, INT64_MAX), s.epoch, "epoch", origin);
  std::optional<bool> sanity;
  if (auto v = scalar_field(arrays, "sanity", origin, 0, 1)) sanity = *v == 1;
  d.sanity = agreed(sanity, s.sanity, "sanity", origin).value_or(false);
  d.batch_size = agreed(scalar_field(arrays, "batch_size", origin, 1, INT64_MAX), s.batch_size,
                        "batch_size", origin);
  d.validation_in_epoch = agreed(scalar_field(arrays, "validation_in_epoch", origin, 0, INT32_MAX),
                                 s.validation_in_epoch, "validation_in_epoch", origin);
  d.dataloader_idx = agreed(scalar_field(arrays, "dataloader_idx", origin, 0, INT32_MAX),
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

}  // namespace

std::optional<int> rank_from_name(const std::string& path) {
  static const std::regex pattern("rank[_-]?([0-9]{1,5})", std::regex::icase);
  const std::optional<int64_t> rank = number_in_name(path, pattern);
  return rank ? std::optional<int>(int(*rank)) : std::nullopt;
}

DatasetTruth read_dataset_truth(const ImportOptions& options) {
  DatasetTruth t;
  if (is_dense_dataset(options.dataset)) {
    // Drawn once: the labels (its size, classes and names) are read off the cells.
    t.dense = load_dense_truth(options.dataset);
    Labels labels;
    labels.num_classes = t.dense->classes();
    labels.class_names = t.dense->class_names;
    labels.source = options.dataset;
    labels.targets.reserve(size_t(t.dense->size()));
    for (int64_t i = 0; i < t.dense->size(); ++i)
      labels.targets.push_back(std::max(t.dense->truth.dominant(i).first, 0));
    t.labels = std::move(labels);
  } else if (!options.dataset.empty()) {
    t.labels = load_labels(options.dataset);
  }
  // One prediction per dataset index: every prediction is known, so is the expected matrix.
  if (!options.predictions.empty()) {
    if (!t.labels) throw InputError("--predictions: needs --dataset (the labels they predict)");
    t.predictions = read_predictions_file(
        parse_spec(predictions_spec(options.predictions), "--predictions"), *t.labels);
  }
  return t;
}

}  // namespace dump_import

using namespace dump_import;

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
  const DumpArray* index = find_field(arrays, "index", origin, key(RecordField::Index));
  const DumpArray* target = find_field(arrays, "target", origin, key(RecordField::Target));
  const DumpArray* prediction =
      find_field(arrays, "prediction", origin, key(RecordField::Prediction));
  const size_t n = static_cast<size_t>(index->size());
  const std::vector<int64_t> preds = prediction->shape.size() == 2
                                         ? argmax_rows(*prediction, origin)
                                         : integers_of(*prediction, "prediction", origin);
  std::vector<int64_t> flags;
  if (const DumpArray* f = find_field(arrays, "flags", origin, key(RecordField::Flags)))
    flags = integers_of(*f, "flags", origin);
  std::vector<int64_t> ranks;
  if (const DumpArray* r = find_field(arrays, "rank", origin, key(RecordField::Rank))) {
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
  const std::vector<int64_t> indices = integers_of(*index, "index", origin);
  append_records(d, site, ranks, indices, integers_of(*target, "target", origin), preds, flags);
  read_evaluation_keys(arrays, origin, d);
  d.task = task_named(d.settings ? d.settings->task : std::nullopt, origin);
  d.cells = cells_from_arrays(arrays, origin, d.task, ranks, indices);
  if (d.cells) {
    drop_pad_rows(*d.cells, flags);
    // What the sample shows is recomputed from its cells when the run's classes are known
    // (import_build): the cells are what count.
    for (Record& r : d.records) r.target = r.prediction = 0;
  }
  if (std::optional<Matrix> m = dump_matrix(arrays, "matrix", origin)) {
    std::set<int> distinct(d.ranks.begin(), d.ranks.end());
    if (distinct.size() > 1) fail(origin, "'matrix' given in a dump that holds several ranks");
    d.rank_matrix = std::move(*m);
  }
  d.reported = dump_matrix(arrays, "reported", origin);
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
  // The class count of a sparse matrix: what building it dense takes (dump_memory).
  if (auto it = arrays.find("sparse_classes"); it != arrays.end() && it->second.shape.empty())
    it->second =
        array_from_npy(archive.read("sparse_classes.npy"), path + ": member sparse_classes.npy");
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
      const std::vector<std::string>& names = field_names(key);
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
  if (!table.header.empty() && cell_column(table, path))
    return dump_from_cell_rows(table, columns, site);
  return dump_from_columns(columns, site);
}

namespace dump_import {

namespace {

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext;
}

RankDump read_dump(const std::string& path, const ImportOptions& options) {
  const std::string ext = extension_of(path);
  if (ext == ".npz") return read_npz_dump(path);
  if (ext == ".npy") return read_npy_dump(path);
  if (ext == ".csv") return read_csv_dump(path);
  if (ext == ".pt" || ext == ".pth") {
    if (!options.pt_reader)
      fail(path,
           ".pt dumps need LibTorch, which this build of ShardLens does not have; save the dump "
           "as .npz");
    return dump_from_arrays(options.pt_reader(path), path);
  }
  fail(path, "unknown dump format '" + ext + "' (expected .npz, .npy, .csv or .pt)");
}

}  // namespace

std::vector<RankDump> read_dumps(const std::vector<std::string>& paths,
                                 const ImportOptions& options, Progress* progress) {
  if (paths.empty()) throw InputError("import: no dump files given");
  const size_t n = paths.size();
  // Read side by side, one dump a core: rank 0 reads every rank's dump after each validation,
  // and at 1000 classes each builds its matrices from their nonzero cells. LibTorch's reader
  // (.pt) keeps to one thread. The first dump in order that fails is the one reported, and
  // progress is reported from this thread only.
  const bool any_pt = std::any_of(paths.begin(), paths.end(), [](const std::string& p) {
    const std::string ext = extension_of(p);
    return ext == ".pt" || ext == ".pth";
  });
  const size_t threads =
      any_pt ? 1 : std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::optional<RankDump>> read(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0}, done{0};
  const auto work = [&](bool report) {
    for (size_t i; (i = next++) < n;) {
      try {
        read[i] = read_dump(paths[i], options);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      ++done;
      if (report) step(progress, "reading dumps", double(done) / double(n));
    }
  };
  step(progress, "reading dumps", 0.0);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work, false);
  work(true);
  for (std::thread& t : pool) t.join();
  std::vector<RankDump> dumps;
  dumps.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    dumps.push_back(std::move(*read[i]));
  }
  step(progress, "reading dumps", 1.0);
  for (RankDump& d : dumps)
    if (!d.epoch) d.epoch = epoch_from_name(d.origin);
  return dumps;
}

}  // namespace dump_import
}  // namespace shardlens

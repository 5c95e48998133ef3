#include "core/runfile/dump_cells.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "core/runfile/import_arrays.h"
#include "core/vocabulary/types.h"
#include "shardlens/dump_format.h"

namespace shardlens::dump_import {
namespace {

// The arrays that hold the cells, in the order a message lists them.
constexpr std::array<const char*, 4> kCellArrays = {"cells_per_record", "cell_target",
                                                    "cell_prediction", "cell_count"};

// Appends one record's cells to `out`, checked: every count in [1, 2^32 - 1], no (true,
// predicted) pair twice, the record's and the dump's counts within 2^53. `where` names the
// record; `cell_place(j)` names its cell j. Returns the record's counts added up.
int64_t append_record_cells(DumpCells& out, const int64_t* target, const int64_t* prediction,
                            const int64_t* count, size_t n, const std::string& origin,
                            const std::function<std::string()>& where,
                            const std::function<std::string(size_t)>& cell_place) {
  int64_t sum = 0;
  for (size_t j = 0; j < n; ++j) {
    const int64_t v = count[j];
    if (v <= 0)
      throw InputError(cell_place(j) + ": count " + std::to_string(v) +
                       " is not positive (a record lists only the cells it counts)");
    if (v > int64_t(UINT32_MAX))
      throw InputError(cell_place(j) + ": count " + std::to_string(v) +
                       " is more than one sample's cell holds (2^32 - 1)");
    sum += v;  // at most 2^53 + 2^32 before the check below: no overflow
    if (sum > kMaxExactCount)
      throw InputError(where() +
                       ": its cells add up to more than 2^53, past what a matrix of "
                       "doubles counts exactly");
  }
  // A pair given twice would count once or twice depending on the reader: refused.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  auto pair_of = [&](size_t j) { return std::make_pair(target[j], prediction[j]); };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return pair_of(a) < pair_of(b) || (pair_of(a) == pair_of(b) && a < b);
  });
  for (size_t k = 1; k < n; ++k) {
    if (pair_of(order[k]) != pair_of(order[k - 1])) continue;
    throw InputError(where() + ": the cell (" + std::to_string(target[order[k]]) + ", " +
                     std::to_string(prediction[order[k]]) + ") is given twice, as its cells " +
                     std::to_string(order[k - 1]) + " and " + std::to_string(order[k]));
  }
  out.target.insert(out.target.end(), target, target + n);
  out.prediction.insert(out.prediction.end(), prediction, prediction + n);
  for (size_t j = 0; j < n; ++j) out.count.push_back(uint32_t(count[j]));
  out.offsets.push_back(out.count.size());
  if (sum > kMaxExactCount - out.total)
    fail(origin,
         "the cells add up to more than 2^53, past what a matrix of doubles counts "
         "exactly");
  out.total += sum;
  return sum;
}

// An array that holds integers, as integers: a float array of class ids or counts is refused
// (a float target is a mistake in the recording, not a value to round).
const std::vector<int64_t>& integer_array(const DumpArray& a, const std::string& name,
                                          const std::string& origin) {
  if (!a.integral)
    fail(origin, name + " is a float array; the cells' class ids, counts and sizes are integers");
  return a.ints;
}

}  // namespace

std::string sample_place(const std::string& origin, int64_t position, int64_t rank, int64_t index) {
  return origin + ": record " + std::to_string(position) + " of rank " + std::to_string(rank) +
         " (dataset index " + std::to_string(index) + ")";
}

std::optional<Task> task_named(const std::optional<std::string>& text, const std::string& origin) {
  if (!text) return std::nullopt;
  const std::optional<Task> task = task_from_string(*text);
  if (!task)
    fail(origin, "settings_json: task '" + *text +
                     "' is none of classification, segmentation, tokens, multilabel");
  return task;
}

std::optional<DumpCells> cells_from_arrays(const DumpArrays& arrays, const std::string& origin,
                                           std::optional<Task> task,
                                           const std::vector<int64_t>& ranks,
                                           const std::vector<int64_t>& index) {
  std::array<const DumpArray*, 4> a{};
  std::array<std::string, 4> names;
  std::string missing, given;
  for (size_t k = 0; k < a.size(); ++k) {
    a[k] = find_field(arrays, kCellArrays[k], origin, &names[k]);
    std::string& list = a[k] ? given : missing;
    list += (list.empty() ? "" : ", ") + std::string(kCellArrays[k]);
  }
  const DumpArray* size = find_field(arrays, "sample_size", origin);
  const DumpArray* ignored = find_field(arrays, "ignored", origin);
  const bool many = task && *task != Task::Classification;
  if (given.empty() && !many) {
    if (size || ignored)
      fail(origin,
           "'sample_size' and 'ignored' belong to a dump of cells; it has no "
           "cells_per_record, cell_target, cell_prediction or cell_count");
    return std::nullopt;
  }
  if (task == Task::Classification)
    fail(origin, "settings_json says task 'classification' but the dump holds cell arrays (" +
                     given + "); a sample of many counts is segmentation, tokens or multilabel");
  if (!missing.empty())
    fail(origin,
         (many ? "task '" + to_string(*task) + "' needs" : std::string("a dump of cells needs")) +
             " the arrays cells_per_record, cell_target, cell_prediction and cell_count "
             "(missing: " +
             missing + ")");
  const std::vector<int64_t>& per = integer_array(*a[0], names[0], origin);
  const std::vector<int64_t>& target = integer_array(*a[1], names[1], origin);
  const std::vector<int64_t>& prediction = integer_array(*a[2], names[2], origin);
  const std::vector<int64_t>& count = integer_array(*a[3], names[3], origin);
  static const std::vector<int64_t> kNone;
  const std::vector<int64_t>& sizes =
      size ? integer_array(*size, "array 'sample_size'", origin) : kNone;
  const std::vector<int64_t>& ignores =
      ignored ? integer_array(*ignored, "array 'ignored'", origin) : kNone;
  const uint64_t m = count.size();  // every cell array as long (check_dump_shapes)
  const size_t n = ranks.size();
  // cells_per_record first: each record's cells are where it says only if they add up.
  uint64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    if (per[i] < 0)
      throw InputError(sample_place(origin, int64_t(i), ranks[i], index[i]) + " (" + names[0] +
                       "): cells_per_record " + std::to_string(per[i]) + " is negative");
    if (uint64_t(per[i]) > m - at)
      fail(origin, "'cells_per_record' adds up to more than the " + std::to_string(m) +
                       " cells of the cell arrays, from record " + std::to_string(i) + " on");
    at += uint64_t(per[i]);
  }
  if (at != m)
    fail(origin, "'cells_per_record' adds up to " + std::to_string(at) +
                     " cells, but the cell arrays hold " + std::to_string(m));
  DumpCells out;
  out.keys = {names[1], names[2], names[3]};
  out.offsets.reserve(n + 1);
  out.target.reserve(m);
  out.prediction.reserve(m);
  out.count.reserve(m);
  const std::string unit = count_unit(task.value_or(Task::Segmentation));
  size_t begin = 0;
  for (size_t i = 0; i < n; ++i) {
    auto where = [&] { return sample_place(origin, int64_t(i), ranks[i], index[i]); };
    auto cell_place = [&](size_t j) {
      return where() + " (" + names[3] + "): cell " + std::to_string(j);
    };
    const size_t len = size_t(per[i]);
    const int64_t sum = append_record_cells(out, target.data() + begin, prediction.data() + begin,
                                            count.data() + begin, len, origin, where, cell_place);
    begin += len;
    const int64_t ign = ignores.empty() ? 0 : ignores[i];
    if (ign < 0)
      throw InputError(where() + " (array 'ignored'): ignored " + std::to_string(ign) +
                       " is negative");
    if (sizes.empty()) continue;
    const int64_t total = sizes[i];
    if (total < 0 || total > kMaxExactCount)
      throw InputError(where() + " (array 'sample_size'): sample_size " + std::to_string(total) +
                       " is outside [0, 2^53]");
    if (ign > total)
      throw InputError(where() + " (array 'ignored'): ignored " + std::to_string(ign) +
                       " is more than its sample_size " + std::to_string(total));
    if (sum + ign != total)
      throw InputError(where() + ": its cells add up to " + std::to_string(sum) + " " + unit +
                       (ignores.empty() ? "" : " and " + std::to_string(ign) + " ignored") +
                       ", but sample_size says " + std::to_string(total) +
                       " (a histogram that is not the sample's)");
  }
  return out;
}

GroupedCells group_cell_rows(const CellRows& rows, const std::string& origin) {
  const size_t n = rows.count.size();
  const bool by_record = !rows.record.empty();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  auto line = [&](size_t row) { return origin + ": line " + std::to_string(rows.lines[row]); };
  if (by_record) {
    for (size_t row = 0; row < n; ++row)
      if (rows.record[row] < 0)
        throw InputError(line(row) + " (column 'record'): record " +
                         std::to_string(rows.record[row]) + " is negative");
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(rows.rank[a], rows.record[a]) < std::tie(rows.rank[b], rows.record[b]);
    });
  }
  auto same_record = [&](size_t a, size_t b) {
    return rows.rank[a] == rows.rank[b] &&
           (by_record ? rows.record[a] == rows.record[b] : rows.index[a] == rows.index[b]);
  };
  GroupedCells out;
  out.cells.keys = rows.keys;
  std::vector<int64_t> target, prediction, count;
  for (size_t k = 0; k < n;) {
    const size_t first = order[k];
    target.clear(), prediction.clear(), count.clear();
    std::vector<size_t> members;
    for (; k < n && same_record(order[k], first); ++k) {
      const size_t row = order[k];
      if (rows.index[row] != rows.index[first])
        throw InputError(line(row) + ": record " + std::to_string(rows.record[row]) + " of rank " +
                         std::to_string(rows.rank[row]) + " has dataset index " +
                         std::to_string(rows.index[row]) + " here but " +
                         std::to_string(rows.index[first]) + " on line " +
                         std::to_string(rows.lines[first]));
      if (rows.flags[row] != rows.flags[first])
        throw InputError(line(row) + ": flags " + std::to_string(rows.flags[row]) +
                         " differ from the flags " + std::to_string(rows.flags[first]) +
                         " of the same record on line " + std::to_string(rows.lines[first]));
      members.push_back(row);
      target.push_back(rows.target[row]);
      prediction.push_back(rows.prediction[row]);
      count.push_back(rows.count[row]);
    }
    const int64_t position = int64_t(out.rank.size());
    auto where = [&] {
      return sample_place(origin, position, rows.rank[first], rows.index[first]) + ", line " +
             std::to_string(rows.lines[first]);
    };
    auto cell_place = [&](size_t j) { return line(members[j]) + " (" + rows.keys[2] + ")"; };
    append_record_cells(out.cells, target.data(), prediction.data(), count.data(), count.size(),
                        origin, where, cell_place);
    out.rank.push_back(rows.rank[first]);
    out.index.push_back(rows.index[first]);
    out.flags.push_back(rows.flags[first]);
  }
  return out;
}

void drop_pad_rows(DumpCells& cells, const std::vector<int64_t>& flags) {
  if (std::none_of(flags.begin(), flags.end(),
                   [](int64_t f) { return (f & dump_format::kFlagPadRow) != 0; }))
    return;
  DumpCells kept;
  kept.keys = cells.keys;
  for (size_t i = 0; i < flags.size(); ++i) {
    if ((flags[i] & dump_format::kFlagPadRow) != 0) continue;
    for (size_t c = cells.offsets[i]; c < cells.offsets[i + 1]; ++c) {
      kept.target.push_back(cells.target[c]);
      kept.prediction.push_back(cells.prediction[c]);
      kept.count.push_back(cells.count[c]);
      kept.total += cells.count[c];
    }
    kept.offsets.push_back(kept.count.size());
  }
  cells = std::move(kept);
}

}  // namespace shardlens::dump_import

namespace shardlens::dump_import {

void check_cells_in_run(const DumpCells& cells, const std::string& origin,
                        const std::vector<int>& ranks, const std::vector<Record>& records,
                        int32_t classes, int ignore_index, Task task) {
  const std::string range = "[0, " + std::to_string(classes) + ")";
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < cells.records(); ++i) {
    auto where = [&](size_t key) {
      return sample_place(origin, i, ranks[size_t(i)], records[size_t(i)].index) + " (" +
             cells.keys[key] + ")";
    };
    labels.clear();
    const size_t begin = cells.offsets[size_t(i)], end = cells.offsets[size_t(i) + 1];
    for (size_t c = begin; c < end; ++c) {
      const int64_t t = cells.target[c], p = cells.prediction[c];
      const std::string cell = ": cell " + std::to_string(c - begin) + " ";
      if (t == ignore_index) continue;  // not counted (import_build leaves it out)
      if (t < 0 || t >= classes)
        throw InputError(where(0) + cell + "has target " + std::to_string(t) + ", outside " +
                         range +
                         (ignore_index >= 0 || ignore_index < -1
                              ? " and not the ignore_index " + std::to_string(ignore_index)
                              : std::string()));
      if (p < 0 || p >= classes)
        throw InputError(where(1) + cell + "has prediction " + std::to_string(p) + ", outside " +
                         range);
      if (task != Task::Multilabel) continue;
      if (t / 2 != p / 2)
        throw InputError(where(1) + cell + "(" + std::to_string(t) + ", " + std::to_string(p) +
                         ") mixes label " + std::to_string(t / 2) + " and label " +
                         std::to_string(p / 2) + "; a multilabel cell is (2l + t, 2l + p)");
      if (cells.count[c] != 1)
        throw InputError(where(2) + cell + "counts " + std::to_string(cells.count[c]) +
                         "; a multilabel cell is one label decision (count 1)");
      labels.push_back(t / 2);
    }
    std::sort(labels.begin(), labels.end());
    if (auto twice = std::adjacent_find(labels.begin(), labels.end()); twice != labels.end())
      throw InputError(where(0) + ": label " + std::to_string(*twice) +
                       " is decided twice in one item");
  }
}

int64_t append_cell_rows(const DumpCells& cells, CellTable& table, int ignore_index) {
  const int64_t first = table.rows();
  const auto c = uint32_t(table.classes);
  std::vector<uint32_t> keys, counts;
  for (int64_t i = 0; i < cells.records(); ++i) {
    keys.clear(), counts.clear();
    for (size_t k = cells.offsets[size_t(i)]; k < cells.offsets[size_t(i) + 1]; ++k) {
      if (cells.target[k] == ignore_index) continue;
      keys.push_back(uint32_t(cells.target[k]) * c + uint32_t(cells.prediction[k]));
      counts.push_back(cells.count[k]);
    }
    table.add_row(keys, counts);
  }
  return first;
}

}  // namespace shardlens::dump_import

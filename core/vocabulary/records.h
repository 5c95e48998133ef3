#pragma once
// Per-rank evaluated records (dataset index, target, prediction, flags), read in chunks.
// Simulations produce them implicitly (no O(n) copy per rank); real and imported runs
// store them. Diagnosis and exports only see this interface.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/vocabulary/limits.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/sample_cells.h"

namespace shardlens {

// Flags carried by every evaluated record.
enum RecordFlag : uint8_t {
  kPadding = 1,  // a DistributedSampler padding duplicate
  kSanity = 2,   // evaluated in the sanity check before epoch 0 (leaked into the metric)
};

// Record::cells of a sample that is one cell of weight 1 (classification).
inline constexpr uint32_t kOneCell = UINT32_MAX;

struct Record {
  int64_t index = 0;
  // A classification sample's target and prediction; for a sample of many counts
  // (sample_cells.h) its largest true and predicted class, what a list of records shows.
  int32_t target = 0;
  int32_t prediction = 0;
  uint8_t flags = 0;
  // The row of the source's CellTable holding what the sample counts (its dataset index in a
  // simulation, its own row in a user's run), or kOneCell: (target, prediction) once.
  uint32_t cells = kOneCell;
};
static_assert(sizeof(Record) == 24, "records are held by the 10^8: keep them 24 bytes");

// --- The bounds of a record's values: one check, whoever read the record -------------------
//
// Every reader (dump imports, run files, a real run's ranks) checks its records with
// check_record_bounds, so a bad value reads alike wherever it came from:
//   "ORIGIN: record 3 of rank 1 (KEY): prediction 9 is outside [0, 3)"
// naming the file (or who published the records), the record, the member, array or column
// that holds the value, the value and the range it misses.

enum class RecordField { Rank, Index, Target, Prediction, Flags };

// Where records were read: built once per file (or rank), named only when a check fails.
struct RecordSite {
  std::string origin;               // the file, or who published the records
  std::array<std::string, 5> keys;  // by RecordField: "member rank0_target.npy", "array
                                    // 'labels'", "column 3"; empty where a value has no name
};

// The half-open ranges a record's values must lie in.
struct RecordBounds {
  int64_t ranks = kMaxWorldSize;  // rank in [0, ranks)
  int64_t samples = kMaxSamples;  // dataset index in [0, samples)
  // Said of an index at or past `samples`: what lies there, and what to do about it.
  std::string beyond_samples =
      "beyond the largest dataset ShardLens handles (2^32-1 samples); are these dataset "
      "indices?";
  int64_t class_begin = INT32_MIN;  // target and prediction in [class_begin, class_end)
  int64_t class_end = int64_t(INT32_MAX) + 1;
  std::optional<int64_t> ignore_index;  // a target allowed outside the classes

  // What a Record can hold, whatever the run: 32-bit class ids, 8-bit flags.
  static RecordBounds storable() { return {}; }
  // What a run of `classes` classes over `dataset_size` samples (0: not known) may hold.
  static RecordBounds of_run(int32_t classes, int64_t dataset_size, int ignore_index);
};

// "ORIGIN: record P of rank R (KEY)": the place of one value, for messages about it.
std::string record_place(const RecordSite& site, int64_t position, int64_t rank, RecordField field);
[[noreturn]] void record_out_of_bounds(const RecordBounds& bounds, const RecordSite& site,
                                       int64_t position, int64_t rank, RecordField field,
                                       int64_t value);

// Throws InputError (wording above) when a value lies outside its bounds. `position` is the
// record's place in what the site names (the file, or the rank's member).
inline void check_record_bounds(const RecordBounds& b, const RecordSite& site, int64_t position,
                                int64_t rank, int64_t index, int64_t target, int64_t prediction,
                                int64_t flags) {
  auto fail = [&](RecordField f, int64_t v) {
    record_out_of_bounds(b, site, position, rank, f, v);
  };
  if (rank < 0 || rank >= b.ranks) fail(RecordField::Rank, rank);
  if (index < 0 || index >= b.samples) fail(RecordField::Index, index);
  if ((target < b.class_begin || target >= b.class_end) && target != b.ignore_index)
    fail(RecordField::Target, target);
  if (prediction < b.class_begin || prediction >= b.class_end)
    fail(RecordField::Prediction, prediction);
  if (flags < 0 || flags > 255) fail(RecordField::Flags, flags);
}

inline void check_record_bounds(const RecordBounds& b, const RecordSite& site, int64_t position,
                                int64_t rank, const Record& r) {
  check_record_bounds(b, site, position, rank, r.index, r.target, r.prediction, r.flags);
}

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  virtual int world_size() const = 0;
  virtual int64_t rank_size(int rank) const = 0;
  // Copies records [offset, offset + out.size()) of `rank` into out.
  virtual void read(int rank, int64_t offset, std::span<Record> out) const = 0;
  // What the records' `cells` rows name; null when every record is one cell (classification).
  virtual const CellTable* cell_table() const { return nullptr; }
};

// Calls f(const Record&, int64_t position) for the records of a rank in order, chunk by
// chunk, while f returns true. Returns false when f stopped the walk.
template <class F>
bool walk_records(const RecordSource& source, int rank, F&& f) {
  constexpr int64_t kChunk = 4096;
  std::vector<Record> buffer(kChunk);
  const int64_t size = source.rank_size(rank);
  for (int64_t offset = 0; offset < size; offset += kChunk) {
    const int64_t len = size - offset < kChunk ? size - offset : kChunk;
    std::span<Record> chunk(buffer.data(), static_cast<size_t>(len));
    source.read(rank, offset, chunk);
    for (int64_t i = 0; i < len; ++i)
      if (!f(chunk[static_cast<size_t>(i)], offset + i)) return false;
  }
  return true;
}

// Calls f(const Record&) for every record of a rank.
template <class F>
void for_each_record(const RecordSource& source, int rank, F&& f) {
  walk_records(source, rank, [&](const Record& r, int64_t) {
    f(r);
    return true;
  });
}

// Records held in memory (real runs, imports).
class StoredRecords : public RecordSource {
 public:
  std::vector<std::vector<Record>> ranks;
  std::shared_ptr<const CellTable> cells;  // rows named by the records' `cells`; null: none
  const CellTable* cell_table() const override { return cells.get(); }
  int world_size() const override { return static_cast<int>(ranks.size()); }
  int64_t rank_size(int rank) const override;
  void read(int rank, int64_t offset, std::span<Record> out) const override;
};

// Adds records to a matrix as an int64 counter counts them: one at (target, prediction) per
// record, except a record whose target is ignore_index or whose target or prediction is not a
// class of `m` (a negative ignore_index drops nothing more); a record naming a row of `cells`
// adds that row's cells instead (count_sample_cells). The one place records become counts;
// the simulation's hot loop counts packed keys instead (core/sim/accumulate.cpp).
void count_records(Matrix& m, std::span<const Record> records, int ignore_index = -1,
                   const CellTable* cells = nullptr);
// The same for one rank of a source, read chunk by chunk.
void count_records(Matrix& m, const RecordSource& source, int rank, int ignore_index = -1);

// Adds one row of a cell table `times` times (a sample evaluated that often), leaving out
// cells whose target is ignore_index or that fall outside `m`: the one place a sample of many
// counts becomes counts.
void count_sample_cells(Matrix& m, const CellTable& cells, int64_t row, int ignore_index,
                        double times = 1);

// Per-rank matrices recomputed from records (count_records on each rank).
std::vector<Matrix> matrices_from_records(const StoredRecords& records, int32_t classes,
                                          int ignore_index);

}  // namespace shardlens

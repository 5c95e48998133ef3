#pragma once
// Per-rank evaluated records (dataset index, target, prediction, flags), read in chunks.
// Simulations produce them implicitly (no O(n) copy per rank); real and imported runs
// store them. Diagnosis and exports only see this interface.
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/matrix.h"

namespace shardlens {

// Flags carried by every evaluated record.
enum RecordFlag : uint8_t {
  kPadding = 1,  // a DistributedSampler padding duplicate
  kSanity = 2,   // evaluated in the sanity check before epoch 0 (leaked into the metric)
};

struct Record {
  int64_t index = 0;
  int32_t target = 0;
  int32_t prediction = 0;
  uint8_t flags = 0;
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  virtual int world_size() const = 0;
  virtual int64_t rank_size(int rank) const = 0;
  // Copies records [offset, offset + out.size()) of `rank` into out.
  virtual void read(int rank, int64_t offset, std::span<Record> out) const = 0;
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
  int world_size() const override { return static_cast<int>(ranks.size()); }
  int64_t rank_size(int rank) const override;
  void read(int rank, int64_t offset, std::span<Record> out) const override;
};

// Per-rank matrices recomputed from records (int64 counts; ignore_index targets dropped).
std::vector<Matrix> matrices_from_records(const StoredRecords& records, int32_t classes,
                                          int ignore_index);

}  // namespace shardlens

#include "core/model/records.h"

#include <algorithm>

namespace shardlens {

int64_t StoredRecords::rank_size(int rank) const {
  return static_cast<int64_t>(ranks[static_cast<size_t>(rank)].size());
}

void StoredRecords::read(int rank, int64_t offset, std::span<Record> out) const {
  const auto& rows = ranks[static_cast<size_t>(rank)];
  std::copy_n(rows.begin() + offset, out.size(), out.begin());
}

}  // namespace shardlens

namespace shardlens {

std::vector<Matrix> matrices_from_records(const StoredRecords& records, int32_t classes,
                                          int ignore_index) {
  std::vector<Matrix> out;
  for (const auto& rank : records.ranks) {
    Matrix m(classes);
    for (const Record& r : rank) {
      if (r.target == ignore_index) continue;
      if (r.target < 0 || r.target >= classes || r.prediction < 0 || r.prediction >= classes)
        continue;
      m.at(r.target, r.prediction) += 1;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace shardlens

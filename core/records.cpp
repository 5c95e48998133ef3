#include "core/records.h"

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

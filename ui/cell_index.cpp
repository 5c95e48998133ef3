#include "ui/cell_index.h"

namespace shardlens::ui {

void CellIndex::build(const Evaluation& e, Progress* progress) {
  m_indexed = false;
  m_classes = e.synced.classes;
  m_offsets.clear();
  m_sorted.clear();
  const auto records = e.records();
  int64_t total = 0;
  for (int r = 0; r < records->world_size(); ++r) total += records->rank_size(r);
  if (total > kMaxIndexed || total >= (int64_t(1) << 32)) return;
  const size_t cells = size_t(m_classes) * size_t(m_classes);
  for (int r = 0; r < records->world_size(); ++r) {
    step(progress, "indexing cells", double(r) / records->world_size());
    std::vector<uint32_t> offsets(cells + 1, 0);
    // Out-of-range targets (ignored ones) do not land in any cell.
    const auto key = [&](const Record& rec) -> int64_t {
      if (rec.target < 0 || rec.target >= m_classes || rec.prediction < 0 ||
          rec.prediction >= m_classes)
        return -1;
      return int64_t(rec.target) * m_classes + rec.prediction;
    };
    for_each_record(*records, r, [&](const Record& rec) {
      if (const int64_t k = key(rec); k >= 0) ++offsets[size_t(k) + 1];
    });
    for (size_t k = 0; k < cells; ++k) offsets[k + 1] += offsets[k];
    std::vector<CellSample> sorted(offsets[cells]);
    std::vector<uint32_t> fill(offsets.begin(), offsets.end() - 1);
    int64_t position = 0;
    for_each_record(*records, r, [&](const Record& rec) {
      if (const int64_t k = key(rec); k >= 0)
        sorted[fill[size_t(k)]++] = {rec.index, position, r, rec.target, rec.prediction, rec.flags};
      ++position;
    });
    m_offsets.push_back(std::move(offsets));
    m_sorted.push_back(std::move(sorted));
  }
  m_indexed = true;
}

int64_t CellIndex::count(int rank, int row, int col) const {
  if (!m_indexed || rank < 0 || rank >= int(m_offsets.size())) return 0;
  const size_t k = size_t(row) * size_t(m_classes) + size_t(col);
  return int64_t(m_offsets[size_t(rank)][k + 1]) - int64_t(m_offsets[size_t(rank)][k]);
}

std::vector<CellSample> CellIndex::samples(int rank, int row, int col, size_t limit) const {
  if (!m_indexed || rank < 0 || rank >= int(m_offsets.size())) return {};
  const size_t k = size_t(row) * size_t(m_classes) + size_t(col);
  const auto& off = m_offsets[size_t(rank)];
  const size_t end = std::min<size_t>(off[k + 1], off[k] + limit);
  const auto& s = m_sorted[size_t(rank)];
  return {s.begin() + off[k], s.begin() + static_cast<std::ptrdiff_t>(end)};
}

std::vector<CellSample> datasetSamples(const Evaluation& e, int row, int col, size_t limit,
                                       int64_t* total) {
  std::vector<CellSample> out;
  int64_t n = 0;
  const auto& in = *e.inputs;
  const uint32_t key = uint32_t(row) * uint32_t(in.classes()) + uint32_t(col);
  for (size_t i = 0; i < in.keys.size(); ++i) {
    if (in.keys[i] != key) continue;
    if (out.size() < limit) out.push_back({int64_t(i), int64_t(i), -1, row, col, 0});
    ++n;
  }
  if (total) *total = n;
  return out;
}

std::vector<CellSample> scanRank(const Evaluation& e, int rank, int row, int col, size_t limit,
                                 int64_t* total) {
  std::vector<CellSample> out;
  int64_t n = 0, position = 0;
  const auto records = e.records();
  for_each_record(*records, rank, [&](const Record& rec) {
    if (rec.target == row && rec.prediction == col) {
      if (out.size() < limit)
        out.push_back({rec.index, position, rank, rec.target, rec.prediction, rec.flags});
      ++n;
    }
    ++position;
  });
  if (total) *total = n;
  return out;
}

}  // namespace shardlens::ui

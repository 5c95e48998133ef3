#include "core/diagnosis/stats.h"

namespace shardlens {

RecordStats collect_stats(const RecordSource& src, int64_t dataset_size, int32_t classes,
                          Progress* progress) {
  RecordStats st;
  const int w = src.world_size();
  const auto n = static_cast<size_t>(std::max<int64_t>(dataset_size, 0));
  std::vector<uint8_t> times;
  assign_huge(times, n, uint8_t{0});
  st.distinct.emplace(classes);
  Matrix& distinct = *st.distinct;
  // Which rank saw an index last (read only where times[i] > 0; a rank number, so 65,536
  // ranks fit in 16 bits): ranks are visited in order, so a repeat by the same rank is a
  // within-rank duplicate.
  std::vector<uint16_t> last_rank;
  assign_huge(last_rank, n, uint16_t{0});
  // A record of a sample of many counts adds its cells (count_sample_cells), else its one cell.
  const CellTable* cells = src.cell_table();
  auto count = [cells](Matrix& into, const Record& rec) {
    if (cells && rec.cells != kOneCell)
      count_sample_cells(into, *cells, rec.cells, -1);
    else
      into.at(rec.target, rec.prediction) += 1;
  };
  for (int r = 0; r < w; ++r) {
    step(progress, "diagnosing", double(r) / std::max(w, 1));
    Matrix m(classes);
    const int64_t size = src.rank_size(r);
    int64_t position = 0;
    int64_t descents = 0;
    int64_t previous = -1;
    int64_t counted = 0;  // valid records outside the sanity check
    for_each_record(src, r, [&](const Record& rec) {
      const int64_t k = position++;
      if (rec.index < 0 || static_cast<size_t>(rec.index) >= n || rec.target < 0 ||
          rec.target >= classes || rec.prediction < 0 || rec.prediction >= classes) {
        ++st.invalid;
        return;
      }
      ++st.records;
      count(m, rec);
      if (rec.flags & kPadding) st.flagged_padding.add(rec.index, rec.target);
      if (rec.flags & kSanity) {
        // Known sanity-check records are that pattern alone; keeping them out of the
        // coverage counts stops them from looking like overlap between ranks.
        st.flagged_sanity.add(rec.index, rec.target);
        return;
      }
      ++counted;
      if (rec.index < previous) ++descents;
      previous = rec.index;
      const auto i = static_cast<size_t>(rec.index);
      if (times[i] > 0) {
        if (last_rank[i] == r) {
          st.within_rank_duplicates.add(rec.index, rec.target);
        } else {
          st.cross_rank_duplicates.add(rec.index, rec.target);
          if (k == size - 1) ++st.cross_rank_at_rank_end;
        }
      } else {
        count(distinct, rec);
      }
      times[i] = static_cast<uint8_t>(times[i] + (times[i] < 255));
      last_rank[i] = static_cast<uint16_t>(r);
    });
    st.rank_sizes.push_back(counted);
    // A padded wrap-around or a sanity prefix adds a descent or two; more means shuffled.
    if (size >= 8 && descents > 2) st.shuffled_order = true;
    st.exact_per_rank.push_back(std::move(m));
  }
  st.times = Coverage(std::move(times));
  return st;
}

}  // namespace shardlens

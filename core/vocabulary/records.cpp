#include "core/vocabulary/records.h"

#include <algorithm>

#include "core/vocabulary/types.h"

namespace shardlens {

int64_t StoredRecords::rank_size(int rank) const {
  return static_cast<int64_t>(ranks[static_cast<size_t>(rank)].size());
}

void StoredRecords::read(int rank, int64_t offset, std::span<Record> out) const {
  const auto& rows = ranks[static_cast<size_t>(rank)];
  std::copy_n(rows.begin() + offset, out.size(), out.begin());
}

RecordBounds RecordBounds::of_run(int32_t classes, int64_t dataset_size, int ignore_index) {
  RecordBounds b;
  if (dataset_size > 0) {
    b.samples = dataset_size;
    b.beyond_samples = "beyond the dataset's " + std::to_string(dataset_size) + " samples";
  }
  b.class_begin = 0;
  b.class_end = classes;
  b.ignore_index = ignore_index;
  return b;
}

std::string record_place(const RecordSite& site, int64_t position, int64_t rank,
                         RecordField field) {
  std::string out = site.origin + ": record " + std::to_string(position);
  if (field != RecordField::Rank) out += " of rank " + std::to_string(rank);
  const std::string& key = site.keys[size_t(field)];
  if (!key.empty()) out += " (" + key + ")";
  return out;
}

void record_out_of_bounds(const RecordBounds& b, const RecordSite& site, int64_t position,
                          int64_t rank, RecordField field, int64_t value) {
  // By RecordField: what the value is called and the range it must lie in.
  static const char* const kNames[] = {"rank", "dataset index", "target", "prediction", "flags"};
  const int64_t begins[] = {0, 0, b.class_begin, b.class_begin, 0};
  const int64_t ends[] = {b.ranks, b.samples, b.class_end, b.class_end, 256};
  const size_t f = size_t(field);
  std::string what = record_place(site, position, rank, field) + ": " + kNames[f] + " ";
  what += std::to_string(value) + " is outside [" + std::to_string(begins[f]) + ", ";
  what += std::to_string(ends[f]) + ")";
  if (field == RecordField::Index && value >= b.samples) what += ", " + b.beyond_samples;
  throw InputError(what);
}

void count_sample_cells(Matrix& m, const CellTable& cells, int64_t row, int ignore_index,
                        double times) {
  const auto keys = cells.keys_of(row);
  const auto counts = cells.counts_of(row);
  const auto c = static_cast<uint32_t>(cells.classes);
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto target = static_cast<int32_t>(keys[i] / c);
    const auto prediction = static_cast<int32_t>(keys[i] % c);
    if (target == ignore_index || target >= m.classes || prediction >= m.classes) continue;
    m.at(target, prediction) += times * counts[i];
  }
}

void count_records(Matrix& m, std::span<const Record> records, int ignore_index,
                   const CellTable* cells) {
  const int32_t classes = m.classes;
  for (const Record& r : records) {
    if (cells && r.cells != kOneCell) {
      count_sample_cells(m, *cells, r.cells, ignore_index);
      continue;
    }
    if (r.target == ignore_index) continue;
    if (r.target < 0 || r.target >= classes || r.prediction < 0 || r.prediction >= classes)
      continue;
    m.at(r.target, r.prediction) += 1;
  }
}

void count_records(Matrix& m, const RecordSource& source, int rank, int ignore_index) {
  constexpr int64_t kChunk = 4096;
  std::vector<Record> buffer(kChunk);
  const int64_t size = source.rank_size(rank);
  for (int64_t offset = 0; offset < size; offset += kChunk) {
    const std::span<Record> chunk(buffer.data(), size_t(std::min(kChunk, size - offset)));
    source.read(rank, offset, chunk);
    count_records(m, chunk, ignore_index, source.cell_table());
  }
}

std::vector<Matrix> matrices_from_records(const StoredRecords& records, int32_t classes,
                                          int ignore_index) {
  std::vector<Matrix> out;
  for (const auto& rank : records.ranks) {
    Matrix m(classes);
    count_records(m, rank, ignore_index, records.cell_table());
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace shardlens

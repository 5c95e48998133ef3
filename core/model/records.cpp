#include "core/model/records.h"

#include <algorithm>

#include "core/model/types.h"

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

namespace {

const char* field_name(RecordField f) {
  switch (f) {
    case RecordField::Rank:
      return "rank";
    case RecordField::Index:
      return "dataset index";
    case RecordField::Target:
      return "target";
    case RecordField::Prediction:
      return "prediction";
    case RecordField::Flags:
      return "flags";
  }
  return "value";
}

std::string half_open(int64_t begin, int64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

}  // namespace

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
  std::string range;
  switch (field) {
    case RecordField::Rank:
      range = half_open(0, b.ranks);
      break;
    case RecordField::Index:
      range = half_open(0, b.samples) + (value >= b.samples ? ", " + b.beyond_samples : "");
      break;
    case RecordField::Target:
    case RecordField::Prediction:
      range = half_open(b.class_begin, b.class_end);
      break;
    case RecordField::Flags:
      range = half_open(0, 256);
      break;
  }
  throw InputError(record_place(site, position, rank, field) + ": " + field_name(field) + " " +
                   std::to_string(value) + " is outside " + range);
}

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

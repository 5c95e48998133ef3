#include "core/realrun/rank_protocol.h"

#include <cstring>

namespace shardlens {

namespace {

constexpr size_t kRecordBytes = 8 + 4 + 4 + 1;

template <class T>
void put(Bytes& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

// Callers check the length first.
template <class T>
T take(const Bytes& in, size_t& at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  at += sizeof(T);
  return v;
}

}  // namespace

bool has_key(RankStore& store, const std::string& key) {
  try {
    return store.check(key);
  } catch (const std::exception&) {
    return false;
  }
}

void publish(RankStore& store, const std::string& key, const Bytes& value) {
  try {
    store.set(key, value);
  } catch (const std::exception& e) {
    throw RunFailure("cannot reach the store: " + first_line(e.what()));
  }
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

Bytes encode_records(const std::vector<Record>& records) {
  Bytes out;
  out.reserve(8 + records.size() * kRecordBytes);
  put<uint64_t>(out, records.size());
  for (const Record& r : records) {
    put<int64_t>(out, r.index);
    put<int32_t>(out, r.target);
    put<int32_t>(out, r.prediction);
    put<uint8_t>(out, r.flags);
  }
  return out;
}

std::vector<Record> decode_records(const Bytes& in) {
  if (in.size() < 8) {
    throw RunFailure("malformed records: " + std::to_string(in.size()) +
                     " bytes, too short for the record count");
  }
  size_t at = 0;
  const uint64_t n = take<uint64_t>(in, at);
  const size_t body = in.size() - 8;
  if (n > body / kRecordBytes || body != n * kRecordBytes) {
    throw RunFailure("malformed records: " + std::to_string(n) + " records announced in " +
                     std::to_string(body) + " bytes (17 per record)");
  }
  std::vector<Record> out(n);
  for (Record& r : out) {
    r.index = take<int64_t>(in, at);
    r.target = take<int32_t>(in, at);
    r.prediction = take<int32_t>(in, at);
    r.flags = take<uint8_t>(in, at);
  }
  return out;
}

Bytes encode_matrix(const Matrix& m) {
  Bytes out;
  out.reserve(4 + m.cells.size() * 8);
  put<int32_t>(out, m.classes);
  for (double v : m.cells) put<double>(out, v);
  return out;
}

Matrix decode_matrix(const Bytes& in, int32_t classes) {
  if (classes < 0) throw std::invalid_argument("decode_matrix: negative class count");
  if (in.size() < 4) {
    throw RunFailure("malformed matrix: " + std::to_string(in.size()) +
                     " bytes, too short for the class count");
  }
  size_t at = 0;
  const int32_t got = take<int32_t>(in, at);
  if (got != classes) {
    throw RunFailure("malformed matrix: " + std::to_string(got) + " classes, the run has " +
                     std::to_string(classes));
  }
  const size_t cells = size_t(classes) * size_t(classes);
  if (in.size() != 4 + cells * 8) {
    throw RunFailure("malformed matrix: " + std::to_string(in.size() - 4) + " bytes of cells for " +
                     std::to_string(classes) + " x " + std::to_string(classes) + " float64");
  }
  Matrix m(classes);
  for (double& v : m.cells) v = take<double>(in, at);
  return m;
}

Bytes encode_text(const std::string& text) {
  return Bytes(text.begin(), text.end());
}

std::string decode_text(const Bytes& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace shardlens

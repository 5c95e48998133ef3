#include "core/realrun/rank_protocol.h"

#include <algorithm>
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

void agree_world_size(RankStore& store, int rank, int world, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto left = [&] {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  publish(store, key_world_size(rank), encode_text(std::to_string(world)));
  const auto world_of = [&](int r) -> int64_t {
    try {
      store.wait({key_world_size(r)}, left());
    } catch (const std::exception&) {
      return -1;
    }
    const std::string text = decode_text(store.get(key_world_size(r)));
    try {
      size_t used = 0;
      const int64_t v = std::stoll(text, &used);
      if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    throw RunFailure("rank " + std::to_string(r) + " published the WORLD_SIZE '" +
                     text.substr(0, 32) + "', not a number");
  };
  const auto disagree = [&](int r, int64_t theirs) {
    return RunFailure("the ranks disagree on WORLD_SIZE: rank " + std::to_string(r) + " has " +
                      std::to_string(theirs) + ", rank " + std::to_string(rank) + " has " +
                      std::to_string(world) + " (every rank must be started with the same)");
  };
  const auto seconds = std::to_string((timeout.count() + 999) / 1000) + " s";
  // Rank 0 only publishes: waiting for every rank here would hold it (and the ranks already
  // up) out of the backend's rendezvous until the last rank starts. A rank that disagrees
  // fails here, naming both sizes, and its error reaches rank 0 through the store.
  if (rank == 0) return;
  const int64_t root = world_of(0);
  if (root < 0) {
    throw RunFailure("rank 0 did not publish its WORLD_SIZE within " + seconds +
                     " (is rank 0 running, with the same MASTER_ADDR and MASTER_PORT?)");
  }
  if (root != world) throw disagree(0, root);
}

StoreLimits run_store_limits(int32_t classes, int64_t samples, int world, int64_t batch_size) {
  const uint64_t c = uint64_t(std::max<int32_t>(classes, 0));
  const uint64_t n = uint64_t(std::max<int64_t>(samples, 0));
  const uint64_t w = uint64_t(std::max(world, 1));
  const uint64_t b = uint64_t(std::max<int64_t>(batch_size, 1));
  // The small values of a run: error texts, notes, counters, the backend's addresses and
  // ids (Gloo's, NCCL's) take far less.
  constexpr uint64_t kSmall = uint64_t(1) << 20;
  const uint64_t matrix = 4 + 8 * c * c;
  // A rank evaluates its share of the epoch (at most every sample, padding included, plus a
  // batch of Accelerate's even_batches) and again the sanity-check batches taken from it.
  const uint64_t records = 8 + kRecordBytes * 2 * (n + b);
  const uint64_t value = std::min(kMaxStoreValueBytes, std::max({matrix, records, kSmall}));
  // Every rank's records and matrix, rank 0's reported matrix, and the small values.
  const uint64_t total_records = 8 * w + kRecordBytes * 2 * (n + w + w * b);
  const uint64_t total = (w + 1) * matrix + total_records + (w + 1) * kSmall;
  return StoreLimits{value, std::max(total, value)};
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

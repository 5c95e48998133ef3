#pragma once
// What the ranks of a real run and their launcher say to each other through the store: the
// store itself (an interface: c10d stores in core/torch, an in-memory one in tests), its
// keys, and the little-endian fixed-width encodings of records and matrices. No LibTorch.
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/matrix.h"
#include "core/model/records.h"

namespace shardlens {

using Bytes = std::vector<uint8_t>;

// The run itself failed (a rank died, a collective or the store timed out, a rank published
// something unreadable): not bad input.
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A key-value store every rank of a run reaches, with c10d's semantics. Implementations
// throw std::exception subclasses when the store cannot be reached or a wait times out.
class RankStore {
 public:
  virtual ~RankStore() = default;
  virtual void set(const std::string& key, const Bytes& value) = 0;
  // The key's value, waiting for the key up to the store's own timeout.
  virtual Bytes get(const std::string& key) = 0;
  // Whether the key exists now; does not wait.
  virtual bool check(const std::string& key) = 0;
  // Waits until every key exists; throws when `timeout` passes first.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  // This store seen under `prefix` (c10d's PrefixStore: key -> prefix + "/" + key). The view
  // keeps this store alive.
  virtual std::shared_ptr<RankStore> prefixed(const std::string& prefix) = 0;
};

// --- keys, under kRunStorePrefix ------------------------------------------------------------

inline constexpr const char* kRunStorePrefix = "shardlens/";
inline std::string key_records(int rank) {
  return "rank" + std::to_string(rank) + "/records";
}
inline std::string key_matrix(int rank) {
  return "rank" + std::to_string(rank) + "/matrix";
}
inline std::string key_done(int rank) {
  return "rank" + std::to_string(rank) + "/done";
}
inline std::string key_error(int rank) {
  return "rank" + std::to_string(rank) + "/error";
}
inline constexpr const char* kKeySynced = "synced";
inline constexpr const char* kKeySyncNote = "sync_note";

// check() that answers false when the store cannot be asked.
bool has_key(RankStore& store, const std::string& key);
// set() that throws RunFailure "cannot reach the store: ..." on failure.
void publish(RankStore& store, const std::string& key, const Bytes& value);

// The first line of an exception's (often multi-line) message.
std::string first_line(const std::string& s);

// --- values ----------------------------------------------------------------------------------
// records: uint64 count, then per record int64 index, int32 target, int32 prediction,
//          uint8 flags (17 bytes);
// matrix:  int32 classes, then classes x classes float64 cells, row-major;
// text:    the UTF-8 bytes.
// Decoders throw RunFailure naming what is wrong when the bytes are not exactly that.

Bytes encode_records(const std::vector<Record>& records);
std::vector<Record> decode_records(const Bytes& bytes);
Bytes encode_matrix(const Matrix& m);
// `classes`: the size every matrix of the run has.
Matrix decode_matrix(const Bytes& bytes, int32_t classes);
Bytes encode_text(const std::string& text);
std::string decode_text(const Bytes& bytes);

}  // namespace shardlens

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

#include "core/platform/store.h"
#include "core/vocabulary/matrix.h"
#include "core/vocabulary/records.h"

namespace shardlens {

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
// The WORLD_SIZE a rank was started with, as decimal text (agree_world_size).
inline std::string key_world_size(int rank) {
  return "rank" + std::to_string(rank) + "/world_size";
}
inline constexpr const char* kKeySynced = "synced";
inline constexpr const char* kKeySyncNote = "sync_note";

// check() that answers false when the store cannot be asked.
bool has_key(RankStore& store, const std::string& key);
// set() that throws RunFailure "cannot reach the store: ..." on failure.
void publish(RankStore& store, const std::string& key, const Bytes& value);

// Checks, before any backend is set up, that a rank was started with rank 0's WORLD_SIZE
// (ranks that disagree otherwise fail deep inside Gloo's rendezvous: "enforce fail ...
// address.cc:45 136 vs 272"). Each rank publishes its own; every other rank waits (within
// `timeout`) for rank 0's and compares. Rank 0 does not wait: it would keep the ranks out of
// the rendezvous until the last one starts. Throws RunFailure naming both ranks and sizes,
// or that rank 0 did not publish its size in time.
void agree_world_size(RankStore& store, int rank, int world, std::chrono::milliseconds timeout);

// What a store hosted for a run of `world` ranks over `samples` samples of `classes` classes,
// batches of `batch_size`, must accept: each value up to the largest its ranks put (a
// matrix, a rank's records), everything together up to what they all put, each with room for
// the small keys of the run and its backend (texts, Gloo's addresses). Values stay within
// kMaxStoreValueBytes; the total is what the run needs (kMaxStoreTotalBytes is the default
// of a store that knows nothing of its run).
StoreLimits run_store_limits(int32_t classes, int64_t samples, int world, int64_t batch_size);

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

#pragma once
// The key-value store every rank of a run reaches (c10d's semantics), as an interface: the
// socket store here, c10d's stores in core/torch, an in-memory one in tests. What the ranks
// say through it is core/realrun/rank_protocol.h.
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/vocabulary/limits.h"

namespace shardlens {

using Bytes = std::vector<uint8_t>;

// The run itself failed (a rank died, a collective or the store timed out, a rank published
// something unreadable): not bad input.
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a store hosted by a rank accepts from its clients (core/platform/socket_store.h): the
// bytes of one value and of every key and value it holds together. A run sizes them to what
// its own ranks put (run_store_limits, core/realrun/rank_protocol.h); the defaults are the
// caps of limits.h.
struct StoreLimits {
  uint64_t value_bytes = kMaxStoreValueBytes;
  uint64_t total_bytes = kMaxStoreTotalBytes;
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

}  // namespace shardlens

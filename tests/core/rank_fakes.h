#pragma once
// In-process stand-ins for what LibTorch gives a real run: a thread-safe in-memory store
// with c10d's semantics (waits with timeouts, prefixed views), and collectives among W
// threads of one process that exchange through shared memory and combine in rank order.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/realrun/rank_protocol.h"
#include "core/realrun/rank_services.h"
#include "core/vocabulary/counter.h"

namespace shardlens::test {

class MemoryStore : public RankStore {
 public:
  explicit MemoryStore(std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : m_state(std::make_shared<State>()) {
    m_state->timeout = timeout;
  }

  void set(const std::string& key, const Bytes& value) override {
    std::lock_guard<std::mutex> lock(m_state->mutex);
    m_state->values[m_prefix + key] = value;
    m_state->changed.notify_all();
  }
  Bytes get(const std::string& key) override {
    std::unique_lock<std::mutex> lock(m_state->mutex);
    const std::string k = m_prefix + key;
    if (!m_state->changed.wait_for(lock, m_state->timeout,
                                   [&] { return m_state->values.count(k) > 0; }))
      throw std::runtime_error("store: timed out waiting for " + k);
    return m_state->values[k];
  }
  bool check(const std::string& key) override {
    std::lock_guard<std::mutex> lock(m_state->mutex);
    return m_state->values.count(m_prefix + key) > 0;
  }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(m_state->mutex);
    const auto all_there = [&] {
      for (const std::string& k : keys)
        if (!m_state->values.count(m_prefix + k)) return false;
      return true;
    };
    if (!m_state->changed.wait_for(lock, timeout, all_there))
      throw std::runtime_error("store: wait timed out");
  }
  std::shared_ptr<RankStore> prefixed(const std::string& prefix) override {
    return std::shared_ptr<MemoryStore>(new MemoryStore(m_state, m_prefix + prefix + "/"));
  }

  // Every full key (prefixes included), for tests that look at what was published.
  std::vector<std::string> keys() const {
    std::lock_guard<std::mutex> lock(m_state->mutex);
    std::vector<std::string> out;
    for (const auto& [k, v] : m_state->values) out.push_back(k);
    return out;
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    std::map<std::string, Bytes> values;
    std::chrono::milliseconds timeout{10000};
  };
  MemoryStore(std::shared_ptr<State> state, std::string prefix)
      : m_state(std::move(state)), m_prefix(std::move(prefix)) {}

  std::shared_ptr<State> m_state;
  std::string m_prefix;
};

// W ranks in W threads. Every collective is an exchange: each rank deposits its vector, the
// last to arrive releases them all, each reads every rank's vector, and the next exchange
// starts once all have read. Ranks must issue the same collectives in the same order (as
// with real backends); a mismatch throws on every rank.
class ThreadGroup {
 public:
  explicit ThreadGroup(int world, std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : m_world(world),
        m_timeout(timeout),
        m_reals(size_t(world)),
        m_ints(size_t(world)),
        m_steps(size_t(world)) {}

  int world() const { return m_world; }

  std::vector<std::vector<double>> exchange(int rank, const std::vector<double>& mine,
                                            const std::string& step) {
    return exchange_impl(rank, mine, "double " + step, m_reals);
  }
  std::vector<std::vector<int64_t>> exchange(int rank, const std::vector<int64_t>& mine,
                                             const std::string& step) {
    return exchange_impl(rank, mine, "int64 " + step, m_ints);
  }

  // The steps (type and name) every rank took, in order, as rank 0 saw them.
  std::vector<std::string> steps() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_log;
  }

 private:
  template <class T>
  std::vector<std::vector<T>> exchange_impl(int rank, const std::vector<T>& mine,
                                            const std::string& step,
                                            std::vector<std::vector<T>>& slots) {
    std::unique_lock<std::mutex> lock(m_mutex);
    if (!m_changed.wait_for(lock, m_timeout, [&] { return !m_draining; }))
      throw std::runtime_error(step + ": timed out waiting for the previous collective");
    slots[size_t(rank)] = mine;
    m_steps[size_t(rank)] = step;
    const uint64_t generation = m_generation;
    if (++m_arrived == m_world) {
      m_draining = true;
      m_left = m_world;
      ++m_generation;
      m_log.push_back(m_steps[0]);
      m_changed.notify_all();
    } else if (!m_changed.wait_for(lock, m_timeout, [&] { return m_generation != generation; })) {
      throw std::runtime_error(step + ": timed out waiting for the other ranks");
    }
    const std::vector<std::vector<T>> all = slots;
    const std::vector<std::string> steps = m_steps;
    if (--m_left == 0) {
      m_arrived = 0;
      m_draining = false;
      m_changed.notify_all();
    }
    for (const std::string& s : steps) {
      if (s != step) throw std::runtime_error("ranks disagree: " + step + " vs " + s);
    }
    for (const auto& v : all) {
      if (v.size() != mine.size()) throw std::runtime_error(step + ": ranks sent unequal sizes");
    }
    return all;
  }

  const int m_world;
  const std::chrono::milliseconds m_timeout;
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_arrived = 0;
  int m_left = 0;
  bool m_draining = false;
  uint64_t m_generation = 0;
  std::vector<std::vector<double>> m_reals;
  std::vector<std::vector<int64_t>> m_ints;
  std::vector<std::string> m_steps;
  std::vector<std::string> m_log;
};

// One rank's collectives in a ThreadGroup: gathers concatenate in rank order; sums add in
// rank order, a float dtype rounding after every addition (the wire sums in that dtype).
// Like LibTorch 1.13's Gloo, it can be told to have no bfloat16 sum.
class ThreadCollectives : public RankCollectives {
 public:
  ThreadCollectives(ThreadGroup& group, int rank, bool sums_bfloat16 = true)
      : m_group(group), m_rank(rank), m_sums_bfloat16(sums_bfloat16) {}

  std::vector<double> all_gather(const std::vector<double>& mine, const char* what) override {
    return concat(m_group.exchange(m_rank, mine, what));
  }
  std::vector<int64_t> all_gather(const std::vector<int64_t>& mine, const char* what) override {
    return concat(m_group.exchange(m_rank, mine, what));
  }
  void all_reduce_sum(std::vector<double>& values, const char* what) override {
    values = sum(m_group.exchange(m_rank, values, what), [](double v) { return v; });
  }
  void all_reduce_sum(std::vector<int64_t>& values, const char* what) override {
    const auto all = m_group.exchange(m_rank, values, what);
    std::vector<int64_t> out(values.size(), 0);
    for (const auto& v : all)
      for (size_t k = 0; k < out.size(); ++k) out[k] += v[k];
    values = out;
  }
  bool all_reduce_sum(std::vector<double>& values, CounterDtype dtype, const char* what) override {
    if (dtype == CounterDtype::BFloat16 && !m_sums_bfloat16) return false;
    values = sum(m_group.exchange(m_rank, values, std::string(what) + " as " + to_string(dtype)),
                 [dtype](double v) { return round_to_dtype(v, dtype); });
    return true;
  }

 private:
  template <class T>
  static std::vector<T> concat(const std::vector<std::vector<T>>& all) {
    std::vector<T> out;
    for (const auto& v : all) out.insert(out.end(), v.begin(), v.end());
    return out;
  }
  template <class Round>
  static std::vector<double> sum(const std::vector<std::vector<double>>& all, Round round) {
    std::vector<double> out(all.front().size(), 0.0);
    for (const auto& v : all)
      for (size_t k = 0; k < out.size(); ++k) out[k] = round(out[k] + v[k]);
    return out;
  }

  ThreadGroup& m_group;
  int m_rank;
  bool m_sums_bfloat16;
};

// Runs f(rank) for every rank in its own thread; the first exception is rethrown here
// after all have finished.
inline void run_ranks(int world, const std::function<void(int)>& f) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        f(r);
      } catch (...) {
        errors[size_t(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace shardlens::test

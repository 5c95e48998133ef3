#pragma once
// How many times each dataset index was evaluated (saturating at 255): one byte per index,
// or, when every index was evaluated the same number of times (a DistributedSampler with no
// padding, the usual case), that number alone. At 10^9 samples the bytes are 1 GB that a
// uniform coverage does without. Reads like a vector of bytes (size, [], iteration).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace shardlens {

class Coverage {
 public:
  Coverage() = default;
  // A count per index, as a record walk makes them.
  Coverage(
      std::vector<uint8_t> per_index)  // NOLINT(google-explicit-constructor): a vector reads as one
      : m_size(per_index.size()), m_per_index(std::move(per_index)) {}
  static Coverage uniform(size_t size, uint8_t times) {
    Coverage c;
    c.m_size = size;
    c.m_value = times;
    return c;
  }

  size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  bool is_uniform() const { return m_per_index.empty(); }
  uint8_t operator[](size_t i) const { return m_per_index.empty() ? m_value : m_per_index[i]; }

  // Indices evaluated exactly `times` times, and at least `times` times.
  int64_t count_equal(uint8_t times) const {
    if (is_uniform()) return m_value == times ? int64_t(m_size) : 0;
    int64_t n = 0;
    for (uint8_t t : m_per_index) n += t == times;
    return n;
  }
  int64_t count_at_least(uint8_t times) const {
    if (is_uniform()) return m_value >= times ? int64_t(m_size) : 0;
    int64_t n = 0;
    for (uint8_t t : m_per_index) n += t >= times;
    return n;
  }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = uint8_t;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = uint8_t;
    const_iterator() = default;
    const_iterator(const Coverage* c, size_t i) : m_c(c), m_i(i) {}
    uint8_t operator*() const { return (*m_c)[m_i]; }
    const_iterator& operator++() {
      ++m_i;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++m_i;
      return old;
    }
    bool operator==(const const_iterator& o) const { return m_i == o.m_i; }

   private:
    const Coverage* m_c = nullptr;
    size_t m_i = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, m_size}; }

  // The same count at every index, however each is stored.
  friend bool operator==(const Coverage& a, const Coverage& b) {
    if (a.m_size != b.m_size) return false;
    if (!a.is_uniform() && !b.is_uniform()) return a.m_per_index == b.m_per_index;
    for (size_t i = 0; i < a.m_size; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  size_t m_size = 0;
  uint8_t m_value = 0;  // every index's count when m_per_index is empty
  std::vector<uint8_t> m_per_index;
};

}  // namespace shardlens

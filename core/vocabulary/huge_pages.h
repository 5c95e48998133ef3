#pragma once
// Large per-sample arrays and C x C matrices backed by transparent huge pages where the
// kernel offers them on request (THP "madvise" mode, Debian's default): filling a 400 MB
// array then costs 200 page faults instead of 100,000, and the random reads of the hot
// loops (keys through a permutation) miss the TLB far less. Measured on the CLI at 10^7
// samples: about a third less CPU time. Where the kernel says no, nothing changes.
#include <cstddef>
#include <vector>

namespace shardlens {

// Asks for huge pages on the 2 MiB-aligned part of [data, data + bytes); small ranges and
// refusals are ignored.
void advise_huge_pages(void* data, size_t bytes);

// For a long-lived process that makes and frees matrices of the same sizes again and again
// (the GUI: each setting change builds C x C matrices per rank, 8 MB each at C = 1000, and
// frees the last result's): blocks up to 32 MB are kept by the allocator when freed and
// handed out again, instead of going back to the kernel, which zero-fills every page anew on
// first touch. At 1000 classes and 8 ranks those page faults were half of a setting
// change's engine time. Call once at the start of main(), before any thread; the process
// then keeps its peak memory (glibc; elsewhere nothing changes).
void keep_freed_blocks();

// v.reserve(count), with the new storage advised before anything touches it.
template <class T>
void reserve_huge(std::vector<T>& v, size_t count) {
  if (count <= v.capacity()) return;
  v.reserve(count);
  advise_huge_pages(v.data(), count * sizeof(T));
}

// v.assign(count, value) on huge-page-advised storage.
template <class T>
void assign_huge(std::vector<T>& v, size_t count, const T& value) {
  if (count > v.capacity()) {
    std::vector<T>().swap(v);
    reserve_huge(v, count);
  }
  v.assign(count, value);
}

}  // namespace shardlens

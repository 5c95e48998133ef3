#include "core/vocabulary/huge_pages.h"

#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cstdint>

namespace shardlens {

void advise_huge_pages(void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  if (!data || bytes < 2 * kHuge) return;
  const auto begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data, (void)bytes;
#endif
}

void keep_freed_blocks() {
#ifdef __GLIBC__
  // glibc's largest mmap threshold (HEAP_MAX_SIZE / 2 on 64-bit): blocks below it come from
  // the heap, whose freed space is reused; above it (a 10^7-sample permutation) they are
  // mapped and unmapped as before.
  constexpr int kLargestKept = 32 << 20;
  mallopt(M_MMAP_THRESHOLD, kLargestKept);
  // Freed space at the top of a heap is not handed back either.
  mallopt(M_TRIM_THRESHOLD, INT32_MAX);
  // One heap for every thread: a worker thread's matrices freed on the GUI thread go back to
  // it, and the next job's workers take them again. (Per-thread heaps are unmapped whole once
  // empty, whatever the trim threshold; small blocks stay in each thread's cache.)
  mallopt(M_ARENA_MAX, 1);
#endif
}

}  // namespace shardlens

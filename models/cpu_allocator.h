// A caching allocator for LibTorch's large CPU tensors.
//
// Note [CPU memory reuse]
// Training allocates the same few large tensors (activations, gradients,
// GEMM outputs of ~50-100 MB on products-sized blocks) every batch. glibc
// serves blocks above 32 MB with a fresh mmap and returns them on free, so
// each batch touches new pages; on the virtual machines this runs on a 4 KiB
// page fault costs ~10 us, i.e. ~0.2 s per 80 MB tensor, more than the math.
// This allocator keeps freed large blocks and hands them out again (best fit
// within a quarter of the request), maps new ones populated (Note [Fresh
// block pages] in cpu_allocator.cpp), and delegates small requests to LibTorch's
// default allocator. It holds at most `max_cached_bytes` of free blocks and
// unmaps the largest beyond that.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dgcn {

// Installs the caching allocator as LibTorch's CPU allocator for the rest of
// the process (tensors allocated before keep their own deleter). Call once,
// early in main; later calls only update the cap. Thread-safe afterwards.
void install_caching_cpu_allocator(size_t max_cached_bytes);

// Whether install_caching_cpu_allocator has run: torch's CPU tensors of 1 MiB
// and up then come from (and go back to) the cache.
bool caching_cpu_allocator_installed();

struct CpuAllocatorStats {
  bool installed = false;
  int64_t large_allocations = 0;  // requests served by the cache logic
  int64_t reused = 0;             // ... of them served from a cached block
  int64_t grown = 0;              // ... of them served by enlarging a smaller cached block
  int64_t mapped_bytes = 0;       // large blocks currently mapped (in use or cached)
  int64_t peak_mapped_bytes = 0;  // the most mapped_bytes has been
  int64_t cached_bytes = 0;       // ... of them free, waiting for reuse
};
CpuAllocatorStats cpu_allocator_stats();

}  // namespace dgcn

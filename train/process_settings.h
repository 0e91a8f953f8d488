// The process-wide acts of a dgcn job, made explicit: the number of
// LibTorch intra-op threads and the caching CPU allocator (Note [CPU memory
// reuse]). The binaries choose them in main(); the library never changes its
// caller's process behind its back (a Python user keeps torch's settings
// unless they ask). The OpenMP re-exec stays a main()'s own first call
// (train/omp_waits.h).
//
//   const int threads = resolve_threads(flag_threads, env.local_world_size);  // base/parallel.h
//   apply_process_settings({.threads = threads, .cpu_cache_bytes = 4ull << 30});
#pragma once

#include <cstddef>

namespace dgcn {

struct ProcessSettings {
  int threads = 0;             // LibTorch's intra-op threads; 0: left as they are
  size_t cpu_cache_bytes = 0;  // > 0: install the caching CPU allocator with this cap
};

// Process-wide, once, early (before tensors worth caching are allocated).
void apply_process_settings(const ProcessSettings& settings);

}  // namespace dgcn

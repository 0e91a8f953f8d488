// The process-wide acts of a dgcn job, made explicit: the number of
// LibTorch intra-op threads and the caching CPU allocator (Note [CPU memory
// reuse]). The binaries choose them in main(), so this sits beside them; the
// library never changes its caller's process behind its back (a Python user
// keeps torch's settings unless they ask, dgcn.enable_cpu_cache). The OpenMP
// re-exec stays a main()'s own first call (apps/cli/omp_waits.h).
// Header-only, as torch_cli.h: each main is one translation unit that sees
// LibTorch anyway.
//
//   const int threads = resolve_threads(flag_threads, env.local_world_size);  // base/parallel.h
//   apply_process_settings({.threads = threads, .cpu_cache_bytes = 4ull << 30});
#pragma once

#include <ATen/Parallel.h>

#include <cstddef>

#include "models/cpu_allocator.h"

namespace dgcn::cli {

struct ProcessSettings {
  int threads = 0;             // LibTorch's intra-op threads; 0: left as they are
  size_t cpu_cache_bytes = 0;  // > 0: install the caching CPU allocator with this cap
};

// Process-wide, once, early (before tensors worth caching are allocated).
inline void apply_process_settings(const ProcessSettings& settings) {
  if (settings.cpu_cache_bytes > 0) install_caching_cpu_allocator(settings.cpu_cache_bytes);
  if (settings.threads > 0) at::set_num_threads(settings.threads);
}

}  // namespace dgcn::cli

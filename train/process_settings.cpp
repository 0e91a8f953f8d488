#include "train/process_settings.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>

#include "base/parallel.h"
#include "models/cpu_allocator.h"

namespace dgcn {

int resolve_threads(int requested, int local_world_size) {
  if (requested > 0) return requested;
  if (std::getenv("DGCN_NUM_THREADS") != nullptr) return default_num_threads();
  return std::max(1, default_num_threads() / std::max(1, local_world_size));
}

void apply_process_settings(const ProcessSettings& s) {
  if (s.cpu_cache_bytes > 0) install_caching_cpu_allocator(s.cpu_cache_bytes);
  if (s.threads > 0) at::set_num_threads(s.threads);
}

}  // namespace dgcn

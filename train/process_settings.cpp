#include "train/process_settings.h"

#include <ATen/Parallel.h>

#include "models/cpu_allocator.h"

namespace dgcn {

void apply_process_settings(const ProcessSettings& s) {
  if (s.cpu_cache_bytes > 0) install_caching_cpu_allocator(s.cpu_cache_bytes);
  if (s.threads > 0) at::set_num_threads(s.threads);
}

}  // namespace dgcn

#include "base/parallel.h"

#include <cstdlib>
#include <string>

namespace dgcn {

int default_num_threads() {
  if (const char* env = std::getenv("DGCN_NUM_THREADS")) {
    try {
      int n = std::stoi(env);
      if (n >= 1) return n;
    } catch (...) {
    }
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

int resolve_threads(int requested, int processes_per_machine) {
  if (requested > 0) return requested;
  if (std::getenv("DGCN_NUM_THREADS") != nullptr) return default_num_threads();
  return std::max(1, default_num_threads() / std::max(1, processes_per_machine));
}

ChunkLoop fork_join_chunks(int num_threads) {
  return [num_threads](int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& fn) {
    parallel_for_chunks(n, chunk, num_threads, fn);
  };
}

}  // namespace dgcn

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

ChunkLoop fork_join_chunks(int num_threads) {
  return [num_threads](int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& fn) {
    parallel_for_chunks(n, chunk, num_threads, fn);
  };
}

}  // namespace dgcn

#include "graph/parallel.h"

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

}  // namespace dgcn

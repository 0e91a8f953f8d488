// See Notes [Passive OpenMP waits] and [Results independent of the thread
// count] in omp_waits.h.
#include "apps/cli/omp_waits.h"

#include <unistd.h>

#include <cstdlib>
#include <utility>

namespace dgcn::cli {

void reexec_with_training_environment(char** argv) {
  bool changed = false;
  for (const auto& [name, value] :
       {std::pair{"OMP_WAIT_POLICY", "PASSIVE"}, std::pair{"MKL_CBWR", "AUTO,STRICT"}}) {
    if (std::getenv(name) != nullptr) continue;
    ::setenv(name, value, 1);
    changed = true;
  }
  if (!changed) return;
  ::execv("/proc/self/exe", argv);
  // execv returned: keep going with the defaults.
}

}  // namespace dgcn::cli

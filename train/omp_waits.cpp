// See Note [Passive OpenMP waits] in omp_waits.h.
#include "train/omp_waits.h"

#include <unistd.h>

#include <cstdlib>

namespace dgcn {

void reexec_with_passive_omp_waits(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  ::execv("/proc/self/exe", argv);
  // execv returned: keep going with the default policy.
}

}  // namespace dgcn

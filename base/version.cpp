#include "base/version.h"

namespace dgcn {

const char* dgcn_version() {
  return DGCN_VERSION;
}

}  // namespace dgcn

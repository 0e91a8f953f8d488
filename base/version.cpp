#include "base/version.h"

namespace dgcn {

const char* dgcn_version() {
  return DGCN_VERSION;
}

std::string build_description() {
  std::string out;
  const std::string torch = DGCN_BUILD_TORCH;
  out += torch.empty() ? "LibTorch: none (a torch-free build)" : "LibTorch " + torch;
  out += "\n";
  const std::string cuda = DGCN_BUILD_CUDA;
  if (cuda.empty()) {
    out +=
        "CUDA: not compiled in (no CUDA toolkit at configure time, or DGCN_CUDA=OFF); cuSPARSE: no; NCCL: no";
  } else if (!DGCN_BUILD_TORCH_CUDA) {
    out +=
        "CUDA " + cuda +
        " for " DGCN_BUILD_CUDA_ARCHS
        ": plain kernels only (this LibTorch has no CUDA: no GPU training); cuSPARSE: kernels only; NCCL: no";
  } else {
    out += "CUDA " + cuda +
           " for " DGCN_BUILD_CUDA_ARCHS ": compiled in (cuSPARSE: yes, NCCL " DGCN_BUILD_NCCL ": yes)";
  }
  return out;
}

}  // namespace dgcn

// dgcn's version (CMake's project version), for --version and the records a
// run leaves behind (checkpoints, metrics, summaries), and what this build
// was compiled with, for bug reports.
#pragma once

#include <string>

namespace dgcn {

const char* dgcn_version();  // e.g. "0.1.0"

// What `<binary> --version` prints after the binary's name and version: the
// LibTorch it was built against and whether the CUDA backend (CUDA, cuSPARSE,
// NCCL) is compiled in, e.g.
//   LibTorch 2.11.0+cu130 (a CUDA build)
//   CUDA 13.0 for sm_80 sm_90, PTX compute_90: compiled in (cuSPARSE: yes, NCCL 2.28.9: yes)
// Facts of the build (CMake's findings), not of the machine it runs on.
std::string build_description();

}  // namespace dgcn

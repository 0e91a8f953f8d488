// The one rule for tests that need a GPU: where none can run them they skip,
// saying why, unless DGCN_REQUIRE_GPU=1 (scripts/gpu-check.sh sets it on the
// GPU host): there a missing GPU or a build without the CUDA glue is a
// failure, so a GPU check cannot pass on tests that never ran.
#pragma once

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <cstring>

#include "models/spmm.h"

namespace dgcn::testing {

inline bool gpu_required() {
  const char* v = std::getenv("DGCN_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace dgcn::testing

// Use as the first statement of a CUDA test body.
#define DGCN_SKIP_WITHOUT_GPU()                                                                      \
  do {                                                                                               \
    const char* dgcn_why_ = nullptr;                                                                 \
    if (!::dgcn::spmm_has_cuda())                                                                    \
      dgcn_why_ = "this build has no torch CUDA glue (see --version)";                               \
    else if (!torch::cuda::is_available())                                                           \
      dgcn_why_ = "the CUDA glue is built, but no GPU is visible";                                   \
    if (dgcn_why_ != nullptr) {                                                                      \
      if (::dgcn::testing::gpu_required()) FAIL() << dgcn_why_ << ", and DGCN_REQUIRE_GPU=1 is set"; \
      GTEST_SKIP() << dgcn_why_;                                                                     \
    }                                                                                                \
  } while (0)

// Skipping a test whose input is missing (a dataset, gnuplot, a source dir):
// outside CI the test is skipped and says why; in CI (DGCN_CI=1, which
// .ci/run exports) it fails instead, because the CI machine provides every
// such input and a skip there would hide that it lost one. A test that
// cannot run in CI at all (it needs a GPU) uses GTEST_SKIP with its reason.
//
//   if (cora.empty()) DGCN_SKIP_OUTSIDE_CI("../shared/datasets/cora.npz is absent");
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace dgcn::testing {

inline bool in_ci() {
  const char* ci = std::getenv("DGCN_CI");
  return ci != nullptr && std::string_view(ci) == "1";
}

}  // namespace dgcn::testing

// Returns from the test (GTEST_SKIP and FAIL do); `reason` may be a chain
// of `<<` operands.
#define DGCN_SKIP_OUTSIDE_CI(reason)                                                                     \
  do {                                                                                                   \
    if (::dgcn::testing::in_ci()) GTEST_FAIL() << "in CI (DGCN_CI=1) a missing input fails: " << reason; \
    GTEST_SKIP() << reason;                                                                              \
  } while (0)

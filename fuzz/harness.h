// See Note [What a fuzz finding is] in fuzz_files.h: DGCN_FUZZ_READER(body)
// defines LLVMFuzzerTestOneInput running `body` on (data, size) and letting
// only dgcn::Error through as an expected outcome.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/error.h"
#include "fuzz/fuzz_files.h"

#define DGCN_FUZZ_READER(body)                                              \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    try {                                                                   \
      body;                                                                 \
    } catch (const ::dgcn::Error&) {                                        \
    }                                                                       \
    return 0;                                                               \
  }

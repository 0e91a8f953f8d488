// A .npy file and the checked conversions every reader applies.
#include "datasets/npy.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  const std::string path = dgcn::fuzz::write_file("a.npy", data, size);
  const dgcn::datasets::NpyArray a = dgcn::datasets::read_npy_file(path);
  if (a.dtype() == dgcn::datasets::DType::kBytes) {
    (void)dgcn::datasets::to_strings(a, "a");
  } else {
    (void)dgcn::datasets::to_float32(a, "a");
    if (a.dtype() != dgcn::datasets::DType::kFloat32 && a.dtype() != dgcn::datasets::DType::kFloat64)
      (void)dgcn::datasets::to_int64(a, "a");
  }
})

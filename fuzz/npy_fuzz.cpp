// A .npy file and the checked conversions every reader applies.
#include "datasets/npy.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  const std::string path = dgcn::fuzz::write_file("a.npy", data, size);
  const dgcn::NpyArray a = dgcn::read_npy_file(path);
  if (a.dtype() == dgcn::DType::kBytes) {
    (void)dgcn::to_strings(a, "a");
  } else {
    (void)dgcn::to_float32(a, "a");
    if (a.dtype() != dgcn::DType::kFloat32 && a.dtype() != dgcn::DType::kFloat64)
      (void)dgcn::to_int64(a, "a");
  }
})

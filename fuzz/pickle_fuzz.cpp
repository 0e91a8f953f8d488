// One pickle: the unpickler and the conversions the Planetoid reader makes.
#include "datasets/pickle.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const auto p = dgcn::detail::pickle::load(bytes, "fuzz");
  (void)dgcn::detail::pickle::as_dense_matrix(p, p.root(), "m", uint64_t{64} << 20);
})

// Planetoid's pickles through the restricted unpickler, and the public split.
#include "datasets/planetoid_reader.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  dgcn::PlanetoidOptions o;
  o.root = dgcn::fuzz::write_files(
      {"raw/ind.cora.x", "raw/ind.cora.tx", "raw/ind.cora.allx", "raw/ind.cora.y", "raw/ind.cora.ty",
       "raw/ind.cora.ally", "raw/ind.cora.graph", "raw/ind.cora.test.index"},
      data, size);
  o.name = "cora";
  o.num_threads = 1;
  (void)dgcn::read_planetoid(o);
})

// A SNAP-style edge list (plain text here; gzip is the OGB target's).
#include "datasets/edgelist_reader.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  dgcn::EdgeListOptions o;
  o.file = dgcn::fuzz::write_file("g.txt", data, size);
  o.num_threads = 2;
  o.chunk_bytes = 64;  // many chunks, so the parallel parse is exercised too
  (void)dgcn::read_edgelist(o);
})

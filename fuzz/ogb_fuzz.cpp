// The OGB layout: the raw/ csv(.gz) parts and one split folder.
#include "datasets/ogb_reader.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  dgcn::OgbOptions o;
  o.root = dgcn::fuzz::write_files(
      {"raw/num-node-list.csv", "raw/num-edge-list.csv", "raw/edge.csv.gz", "raw/node-feat.csv",
       "raw/node-label.csv", "split/s/train.csv", "split/s/valid.csv", "split/s/test.csv.gz"},
      data, size);
  o.num_threads = 2;
  o.chunk_bytes = 64;
  (void)dgcn::read_ogb(o);
})

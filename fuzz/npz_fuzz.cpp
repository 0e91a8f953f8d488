// A gnn-benchmark .npz dataset (the zip archive, its .npy members, the
// sparse parts, labels) read end to end.
#include "datasets/npz_reader.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  dgcn::NpzOptions o;
  o.file = dgcn::fuzz::write_file("g.npz", data, size);
  o.num_threads = 1;
  o.max_feature_bytes = 256 << 20;  // under the fuzzer's -rss_limit_mb, as a machine's memory is in real use
  o.split = dgcn::parse_split_spec("ratio:0.5,0.25,0.25");
  (void)dgcn::read_npz_dataset(o);
})

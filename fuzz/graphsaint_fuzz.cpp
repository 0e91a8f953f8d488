// GraphSAINT's folder: adj_full.npz, feats.npy, class_map.json, role.json.
#include "datasets/graphsaint_reader.h"
#include "fuzz/harness.h"

DGCN_FUZZ_READER({
  dgcn::GraphSaintOptions o;
  o.root = dgcn::fuzz::write_files({"adj_full.npz", "feats.npy", "class_map.json", "role.json"}, data, size);
  o.num_threads = 1;
  (void)dgcn::read_graphsaint(o);
})

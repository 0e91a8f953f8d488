// The .gcn store: header, section table, frames, a whole load (and every
// checksum through verify).
#include "fuzz/harness.h"
#include "graph/store_format.h"

DGCN_FUZZ_READER({
  const std::string path = dgcn::fuzz::write_file("store.gcn", data, size);
  dgcn::LoadOptions load;
  load.threads = 1;
  dgcn::GraphStore s = dgcn::load_store(path, load);
  (void)s;
})

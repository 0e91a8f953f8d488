// A partitioned graph's folder: partition.json and two parts, read as
// dgcn-train --data DIR does (the manifest, then each part loaded and
// checked against it).
#include "fuzz/harness.h"
#include "partition/partition_files.h"

DGCN_FUZZ_READER({
  const std::string dir =
      dgcn::fuzz::write_files({"partition.json", "part-000.gcn", "part-001.gcn"}, data, size);
  const dgcn::PartitionManifest m = dgcn::read_partition_manifest(dir);
  dgcn::LoadOptions load;
  load.threads = 1;
  for (int p = 0; p < m.parts; ++p) {
    const std::string path = dgcn::part_path(dir, m, p);
    dgcn::check_part(dgcn::load_store(path, load), m, p, path, 1);
  }
})

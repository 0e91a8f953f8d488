#include "partition/part_loading.h"

#include <fmt/format.h>

#include <exception>
#include <vector>

#include "base/error.h"

namespace dgcn {

PartitionedData load_partition_part(const std::string& dir, Collectives& comm, const LoadOptions& load) {
  std::string error;
  PartitionedData data;
  try {
    data.manifest = read_partition_manifest(dir);
    DGCN_CHECK(data.manifest.parts == comm.size(),
               "{} is partitioned into {} parts but the job has {} ranks; start one rank per part", dir,
               data.manifest.parts, comm.size());
    const std::string path = part_path(dir, data.manifest, comm.rank());
    data.part = load_store(path, load);
    check_part(data.part, data.manifest, comm.rank(), path, load.threads);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Every rank learns every rank's outcome.
  std::string failed;
  const std::vector<std::string> errors = all_gather_text(comm, error);
  for (size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r].empty()) failed += fmt::format("{}rank {}: {}", failed.empty() ? "" : "; ", r, errors[r]);
  }
  DGCN_CHECK(failed.empty(), "loading the partitioned graph failed on {}", failed);
  return data;
}

}  // namespace dgcn

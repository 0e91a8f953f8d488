#include "partition/part_loading.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>
#include <utility>
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
  // Every rank learns every rank's outcome; ranks that failed alike (a part
  // count that does not fit the job fails on all) are named together, so
  // each reason is said once.
  const std::vector<std::string> errors = all_gather_text(comm, error);
  std::vector<std::pair<std::string, std::vector<size_t>>> reasons;  // in order of first rank
  for (size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    auto same =
        std::find_if(reasons.begin(), reasons.end(), [&](const auto& x) { return x.first == errors[r]; });
    if (same == reasons.end()) same = reasons.insert(reasons.end(), {errors[r], {}});
    same->second.push_back(r);
  }
  std::string failed;
  for (const auto& [reason, ranks] : reasons) {
    failed += fmt::format("{}{} {}: {}", failed.empty() ? "" : "; ", ranks.size() == 1 ? "rank" : "ranks",
                          fmt::join(ranks, ", "), reason);
  }
  DGCN_CHECK(failed.empty(), "loading the partitioned graph failed on {}", failed);
  return data;
}

}  // namespace dgcn

// partition/part_loading: rank r loads part r of a folder, and a reason
// every rank shares is said once.
#include "partition/part_loading.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "fixtures.h"
#include "graph/store_test_util.h"
#include "in_process_collectives.h"
#include "partition/partition_files.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

using testing::error_of;

// A part count that does not fit the job fails on every rank for one
// reason: each rank's error says it once and names the ranks together.
TEST(PartLoading, AReasonSharedByRanksIsSaidOnce) {
  testing::ScratchDir scratch;
  const std::string dir = scratch.file("p2");
  WritePartitionOptions o;
  o.partition = {.parts = 2, .method = PartitionMethod::kMetis, .seed = 2, .threads = 2};
  o.source_path = "community.gcn";
  write_partition(testing::community_store(), dir, o);
  testing::InProcessGroup group(3);
  std::vector<std::string> errors(3);
  testing::run_ranks(3, [&](int rank) {
    errors[static_cast<size_t>(rank)] = error_of([&] { load_partition_part(dir, group.at(rank), {}); });
  });
  const std::string reason = "is partitioned into 2 parts but the job has 3 ranks";
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("failed on ranks 0, 1, 2: " + dir + " " + reason), std::string::npos) << e;
    EXPECT_EQ(e.find(reason), e.rfind(reason)) << "said once: " << e;
  }
}

}  // namespace
}  // namespace dgcn

// partition/collectives.h: the all-gathers and the broadcast built on
// exchange, on ranks in one process.
#include "partition/collectives.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "in_process_collectives.h"

namespace dgcn {
namespace {

using testing::InProcessGroup;
using testing::run_ranks;

TEST(Collectives, AllGatherGivesEveryRankEveryRanksValuesInRankOrder) {
  InProcessGroup group(3);
  run_ranks(3, [&](int rank) {
    const std::vector<double> mine(static_cast<size_t>(rank), rank + 0.5);  // rank 0 sends none
    const auto all = all_gather(group.at(rank), mine);
    ASSERT_EQ(all.size(), 3u);
    for (int q = 0; q < 3; ++q) EXPECT_EQ(all[static_cast<size_t>(q)], std::vector<double>(q, q + 0.5));
    EXPECT_EQ(group.at(rank).sum({1.0, static_cast<double>(rank)}), (std::vector<double>{3.0, 3.0}));
    EXPECT_EQ(all_gather_text(group.at(rank), rank == 1 ? "bad part" : ""),
              (std::vector<std::string>{"", "bad part", ""}));
  });
}

TEST(Collectives, BroadcastGivesEveryRankTheRootsValues) {
  InProcessGroup group(3);
  run_ranks(3, [&](int rank) {
    // Only the root's values count, whatever the others pass (here their
    // own rank, or nothing).
    const std::vector<int64_t> mine(static_cast<size_t>(rank), rank);
    EXPECT_EQ(broadcast_values(group.at(rank), 2, mine), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(broadcast_values(group.at(rank), 1, mine), (std::vector<int64_t>{1}));
    EXPECT_TRUE(broadcast_values(group.at(rank), 0, mine).empty());
  });
  EXPECT_THROW(broadcast_values(group.at(0), 3, std::vector<int64_t>{}), Error) << "no rank 3 of 3";
}

}  // namespace
}  // namespace dgcn

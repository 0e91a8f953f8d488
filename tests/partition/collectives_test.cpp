// partition/collectives.h: the all-gathers built on exchange, on ranks in
// one process.
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

}  // namespace
}  // namespace dgcn

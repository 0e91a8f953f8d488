// partition/part_map: every node's owner and its row there.
#include "partition/part_map.h"

#include <gtest/gtest.h>

#include "three_parts.h"

namespace dgcn {
namespace {

using testing::ThreeParts;

TEST(PartMap, OwnerAndRowAreThePartAndTheRankInIdOrder) {
  ThreeParts p;
  const PartMap& map = *p.maps[1];
  EXPECT_EQ(map.parts(), 3);
  EXPECT_EQ(map.num_nodes(), 30);
  EXPECT_EQ(map.owner(14), 2);
  EXPECT_EQ(map.row(14), 4);  // part 2 holds 2, 5, 8, 11, 14: row 4
  EXPECT_TRUE(map.owns(2, 14));
  EXPECT_FALSE(map.owns(1, 14));
  EXPECT_FALSE(map.owns(0, 30)) << "out of range";
  EXPECT_FALSE(map.owns(0, -1));
}

}  // namespace
}  // namespace dgcn

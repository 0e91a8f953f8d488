// The one rule for which evaluation items each rank scores.
#include "train/evaluation_split.h"

#include <gtest/gtest.h>

namespace dgcn {
namespace {

TEST(EvaluationSlice, RanksPartitionTheItemsInOrder) {
  for (int64_t n : {0, 1, 5, 7, 1000}) {
    for (int w : {1, 2, 3, 4}) {
      int64_t next = 0;
      for (int r = 0; r < w; ++r) {
        const IndexRange s = evaluation_slice(n, r, w);
        EXPECT_EQ(s.begin, next) << n << " items, rank " << r << " of " << w;
        EXPECT_GE(s.size(), n / w);
        EXPECT_LE(s.size(), n / w + 1);
        next = s.end;
      }
      EXPECT_EQ(next, n);
    }
  }
  EXPECT_EQ(evaluation_slice(5, 0, 2).end, 2);  // the header's example
}

}  // namespace
}  // namespace dgcn

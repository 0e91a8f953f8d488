#include "distributed/buckets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "base/error.h"

namespace dgcn {
namespace {

using Buckets = std::vector<std::vector<int64_t>>;

TEST(Buckets, WorkedExampleFromTheHeader) {
  std::vector<int64_t> bytes = {400, 100, 300, 200};
  EXPECT_EQ(assign_buckets(bytes, {250, 500}), (Buckets{{3, 2}, {1, 0}}));
}

TEST(Buckets, DefaultCapsAreC10dsAndNamed) {
  EXPECT_EQ(kFirstBucketBytes, 1 << 20);
  EXPECT_EQ(kBucketBytes, 25 << 20);
  BucketCaps caps;
  EXPECT_EQ(caps.first_bytes, kFirstBucketBytes);
  EXPECT_EQ(caps.bytes, kBucketBytes);
  // A 4 MiB weight and 4 KiB bias per layer, four layers: the first bucket
  // closes after the last layer's weight (>= 1 MiB), then 25 MiB buckets.
  std::vector<int64_t> bytes;
  for (int layer = 0; layer < 4; ++layer) {
    bytes.push_back(4 << 20);
    bytes.push_back(4 << 10);
  }
  EXPECT_EQ(assign_buckets(bytes), (Buckets{{7, 6}, {5, 4, 3, 2, 1, 0}}));
}

TEST(Buckets, EveryParameterOnceInReverseOrderAndCapsRespected) {
  std::vector<int64_t> bytes = {10, 0, 700, 5, 5, 5, 90, 300, 1, 1, 1, 2000, 3};
  BucketCaps caps{100, 400};
  Buckets buckets = assign_buckets(bytes, caps);
  std::vector<int64_t> order;
  for (const auto& b : buckets) order.insert(order.end(), b.begin(), b.end());
  std::vector<int64_t> expected(bytes.size());
  std::iota(expected.rbegin(), expected.rend(), int64_t{0});
  EXPECT_EQ(order, expected);  // launch order = reverse registration order, each once
  for (size_t b = 0; b < buckets.size(); ++b) {
    int64_t total = 0;
    for (int64_t i : buckets[b]) total += bytes[i];
    int64_t cap = b == 0 ? caps.first_bytes : caps.bytes;
    // Every bucket but the last reached its cap, and dropping its last
    // parameter would have left it under (it closed as soon as it could).
    if (b + 1 < buckets.size()) {
      EXPECT_GE(total, cap) << "bucket " << b;
      EXPECT_LT(total - bytes[buckets[b].back()], cap) << "bucket " << b;
    }
  }
}

TEST(Buckets, LargeParameterGetsItsOwnBucket) {
  std::vector<int64_t> bytes = {8, 1000, 8};
  EXPECT_EQ(assign_buckets(bytes, {16, 16}), (Buckets{{2, 1}, {0}}));
  EXPECT_EQ(assign_buckets(bytes, {4, 16}), (Buckets{{2}, {1}, {0}}));
}

TEST(Buckets, EmptyAndInvalidInput) {
  EXPECT_TRUE(assign_buckets(std::vector<int64_t>{}).empty());
  std::vector<int64_t> bad = {4, -1};
  EXPECT_THROW(assign_buckets(bad), Error);
  std::vector<int64_t> ok = {4};
  EXPECT_THROW(assign_buckets(ok, {0, 10}), Error);
}

}  // namespace
}  // namespace dgcn

#include "base/random.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace dgcn {
namespace {

TEST(Random, BelowIsInRangeAndUniform) {
  // n = 3 is far from a power of two, the case where a plain modulo or a
  // biased multiply would show; 2^63 + 1 exercises Lemire's rejection path.
  Rng rng(stream_key(1, {2, 3}));
  std::vector<int64_t> counts(3, 0);
  const int64_t draws = 300000;
  for (int64_t i = 0; i < draws; ++i) counts[rng.below(3)]++;
  double chi = 0;
  for (int64_t c : counts) chi += (c - draws / 3.0) * (c - draws / 3.0) / (draws / 3.0);
  EXPECT_LT(chi, 13.82);  // chi-square, 2 degrees of freedom, p = 0.001
  const uint64_t big = (uint64_t{1} << 63) + 1;
  int64_t upper_half = 0;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t x = rng.below(big);
    ASSERT_LT(x, big);
    upper_half += x >= (uint64_t{1} << 62);
  }
  EXPECT_NEAR(upper_half / 10000.0, 0.5, 0.03);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(rng.below(1), 0u);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Random, KeysSeparateStreams) {
  // Neighbouring coordinates, permuted coordinates and other seeds all give
  // distinct keys, and the same coordinates the same stream.
  std::set<uint64_t> keys;
  for (uint64_t seed = 0; seed < 4; ++seed)
    for (uint64_t a = 0; a < 16; ++a)
      for (uint64_t b = 0; b < 16; ++b) keys.insert(stream_key(seed, {a, b}));
  EXPECT_EQ(keys.size(), 4u * 16 * 16);
  EXPECT_NE(stream_key(0, {1, 2}), stream_key(0, {2, 1}));
  EXPECT_NE(stream_key(0, {1}), stream_key(0, {1, 0}));
  Rng a(stream_key(5, {7})), b(stream_key(5, {7}));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.next(), b.next());
}

}  // namespace
}  // namespace dgcn

// The model's input features: PyG's NormalizeFeatures, on a whole graph and
// over the parts of a partitioned one.
#include "train/features.h"

#include <gtest/gtest.h>

#include "fixtures.h"
#include "in_process_collectives.h"
#include "partition/partition.h"

namespace dgcn {
namespace {

TEST(Features, NormalizedFeaturesAreThoseOfPygNormalizeFeatures) {
  GraphStore s = testing::make_store(testing::cycle_edges(4), 3, 2);
  Buffer b = normalized_features(s, 2);
  auto v = b.as<float>();
  // The smallest feature is 0.0. Node 1: 1.0, 1.1, 1.2 -> divided by 3.3.
  EXPECT_FLOAT_EQ(v[3], 1.0f / 3.3f);
  EXPECT_FLOAT_EQ(v[3] + v[4] + v[5], 1.0f);
  // Node 0: 0.0, 0.1, 0.2 sums to 0.3 < 1: divided by 1, unchanged.
  EXPECT_FLOAT_EQ(v[2], 0.2f);
  // Signed features are shifted by the global minimum first (no sign flips,
  // no blow-up of rows summing near zero): PyG's value - value.min().
  std::vector<float> signed_rows = {-2.0f, 1.0f,  1.0f,   // shifted: 0 3 3 -> /6
                                    1.0f,  -1.0f, 0.01f,  // 3 1 2.01 -> /6.01
                                    -2.0f, -2.0f, -1.5f,  // 0 0 0.5 -> /1
                                    0.0f,  0.0f,  0.0f};  // 2 2 2 -> /6
  s.features = Buffer::from_vector(std::move(signed_rows));
  b = normalized_features(s, 1);
  v = b.as<float>();
  EXPECT_FLOAT_EQ(v[0], 0.0f);
  EXPECT_FLOAT_EQ(v[1], 0.5f);
  EXPECT_FLOAT_EQ(v[4], 1.0f / 6.01f);
  EXPECT_FLOAT_EQ(v[8], 0.5f);
  EXPECT_FLOAT_EQ(v[9], 1.0f / 3.0f);
  for (float x : v) EXPECT_GE(x, 0.0f);
}

TEST(Features, WithoutNormalizingTheStoresOwnFeaturesAreSharedNotCopied) {
  const GraphStore s = testing::make_store(testing::cycle_edges(4), 3, 2);
  const Buffer b = input_features(s, /*normalize=*/false, 1);
  EXPECT_EQ(b.as<float>().data(), s.features.as<float>().data());
}

// Every part shifts by the smallest feature of all parts, so the parts hold
// exactly the whole graph's normalized rows.
TEST(Features, PartsOfAPartitionedGraphNormalizeAsTheWholeGraph) {
  GraphStore whole = testing::make_store(testing::cycle_edges(6), 2, 2);
  whole.features = Buffer::from_vector(std::vector<float>{0, 1, 2, 3, -4, 5, 6, 7, 8, 9, 10, 11});
  const Buffer expected = normalized_features(whole, 1);
  std::vector<int32_t> owner{0, 0, 0, 1, 1, 1};  // the smallest feature (-4, node 2) is in part 0 only
  const Buffer owners = Buffer::from_vector(std::move(owner));
  std::vector<GraphStore> parts;
  for (int r = 0; r < 2; ++r) parts.push_back(extract_part(whole, owners, r, 2, "{}", 1));
  testing::InProcessGroup group(2);
  std::vector<Buffer> got(2);
  testing::run_ranks(2, [&](int r) {
    got[static_cast<size_t>(r)] = input_features(parts[static_cast<size_t>(r)], true, 1, &group.at(r));
  });
  const auto want = expected.as<float>();
  for (int r = 0; r < 2; ++r) {
    const auto rows = got[static_cast<size_t>(r)].as<float>();
    ASSERT_EQ(rows.size(), 6u);
    for (size_t i = 0; i < rows.size(); ++i)
      EXPECT_FLOAT_EQ(rows[i], want[static_cast<size_t>(r) * 6 + i]) << r;
  }
}

}  // namespace
}  // namespace dgcn

#include "graph/graph_store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "fixtures.h"

namespace dgcn {
namespace {

std::string error_of(const GraphStore& s) {
  try {
    s.validate("store.gcn", 2);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

template <class T>
void set(Buffer& b, size_t i, T value) {
  testing::damage<T>(b)[i] = value;
}

TEST(GraphStore, FixtureIsValid) {
  GraphStore s = testing::make_store(testing::eight_node_edges());
  EXPECT_EQ(error_of(s), "");
  EXPECT_FLOAT_EQ(s.features_of(3)[2], 3.2f);
  EXPECT_EQ(s.label(4), 1);
  EXPECT_EQ(s.train_nodes().size(), 4u);
  EXPECT_EQ(s.degrees()[2], 3);
}

TEST(GraphStore, NamesNonFiniteFeature) {
  GraphStore s = testing::make_store(testing::eight_node_edges());
  set(s.features, 5 * 4 + 1, std::numeric_limits<float>::quiet_NaN());
  EXPECT_NE(error_of(s).find("feature [node 5, column 1] is nan"), std::string::npos) << error_of(s);
}

TEST(GraphStore, NamesLabelOutOfRange) {
  GraphStore s = testing::make_store(testing::eight_node_edges());
  set<int32_t>(s.labels, 6, 3);
  EXPECT_NE(error_of(s).find("label of node 6 is 3"), std::string::npos) << error_of(s);
  set<int32_t>(s.labels, 6, -1);  // unlabelled is fine
  EXPECT_EQ(error_of(s), "");
}

TEST(GraphStore, NamesSplitProblems) {
  GraphStore s = testing::make_store(testing::eight_node_edges());
  set<int64_t>(s.test, 0, 1);  // node 1 is also in train
  EXPECT_NE(error_of(s).find("node 1 is in both train and test"), std::string::npos) << error_of(s);
  s = testing::make_store(testing::eight_node_edges());
  set<int64_t>(s.valid, 1, 99);
  EXPECT_NE(error_of(s).find("valid[1] = 99"), std::string::npos) << error_of(s);
  s = testing::make_store(testing::eight_node_edges());
  set<int64_t>(s.train, 1, 0);
  EXPECT_NE(error_of(s).find("not strictly increasing"), std::string::npos) << error_of(s);
}

TEST(GraphStore, NamesWrongDegreeAndSizes) {
  GraphStore s = testing::make_store(testing::eight_node_edges());
  set<int32_t>(s.degree, 2, 7);
  EXPECT_NE(error_of(s).find("degree[2] = 7 but its CSR row has 3"), std::string::npos) << error_of(s);
  s = testing::make_store(testing::eight_node_edges());
  s.features = s.features.slice(0, 16);
  EXPECT_NE(error_of(s).find("features have 16 bytes"), std::string::npos) << error_of(s);
}

TEST(GraphStore, MultiLabelBits) {
  GraphStore s = testing::make_store(testing::cycle_edges(4));
  s.task = Task::kMultiLabel;
  s.num_classes = 10;  // two bytes per node
  std::vector<uint8_t> bits(8, 0);
  bits[2 * 1 + 1] = 0x02;  // node 1, class 9
  s.labels = Buffer::from_vector(std::move(bits));
  EXPECT_EQ(error_of(s), "");
  EXPECT_TRUE(s.has_label(1, 9));
  EXPECT_FALSE(s.has_label(1, 8));
  set<uint8_t>(s.labels, 2 * 3 + 1, 0x04);  // node 3, class 10 does not exist
  EXPECT_NE(error_of(s).find("node 3 has a label bit set beyond class 9"), std::string::npos) << error_of(s);
}

}  // namespace
}  // namespace dgcn

#include "sampling/node_facts.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "base/error.h"

namespace dgcn {
namespace {

struct Gathered {
  std::vector<int32_t> degree;
  std::vector<int64_t> y;
  std::vector<bool> masks;  // train row, val row, test row
};

Gathered gather(const NodeFacts& facts, const std::vector<int64_t>& n_id) {
  const size_t num = n_id.size();
  std::vector<int32_t> degree(num, -7);
  std::vector<int64_t> y(num, -7);
  std::unique_ptr<bool[]> masks(new bool[3 * num]);
  facts.gather(n_id, degree, y, {masks.get(), 3 * num});
  return {degree, y, std::vector<bool>(masks.get(), masks.get() + 3 * num)};
}

TEST(NodeFacts, GathersTheHeadersExample) {
  const std::vector<int32_t> degrees{3, 1}, classes{7, -1};
  const std::vector<uint8_t> bits{0b001, 0b100};
  const NodeFacts facts(degrees, classes, bits);
  EXPECT_EQ(facts.entry_bytes(), 4u);
  const Gathered g = gather(facts, {1, 0});
  EXPECT_EQ(g.degree, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(g.y, (std::vector<int64_t>{-1, 7}));
  EXPECT_EQ(g.masks, (std::vector<bool>{false, true, false, false, true, false}));
}

// Against the three tables read directly, over random ids (with repeats and
// batches longer than the gather's chunk), for entries of 4 and 8 bytes.
void expect_equal_to_the_tables(int32_t max_degree, int32_t num_classes, size_t expected_entry_bytes) {
  constexpr size_t kNodes = 5000;
  std::mt19937 rng(7);
  std::vector<int32_t> degrees(kNodes), classes(kNodes);
  std::vector<uint8_t> bits(kNodes);
  for (size_t v = 0; v < kNodes; ++v) {
    degrees[v] = static_cast<int32_t>(rng() % (static_cast<uint32_t>(max_degree) + 1));
    classes[v] = static_cast<int32_t>(rng() % (static_cast<uint32_t>(num_classes) + 1)) - 1;
    bits[v] = static_cast<uint8_t>(rng() % 8);
  }
  degrees[0] = max_degree;
  classes[1] = num_classes - 1;
  const NodeFacts facts(degrees, classes, bits);
  EXPECT_EQ(facts.entry_bytes(), expected_entry_bytes);
  std::vector<int64_t> n_id(3000);
  for (auto& v : n_id) v = static_cast<int64_t>(rng() % kNodes);
  n_id[0] = 0;
  n_id[1] = 1;
  const Gathered g = gather(facts, n_id);
  for (size_t i = 0; i < n_id.size(); ++i) {
    const auto v = static_cast<size_t>(n_id[i]);
    ASSERT_EQ(g.degree[i], degrees[v]) << "node " << v;
    ASSERT_EQ(g.y[i], classes[v]) << "node " << v;
    for (size_t k = 0; k < 3; ++k) ASSERT_EQ(g.masks[k * n_id.size() + i], ((bits[v] >> k) & 1) != 0);
  }
}

TEST(NodeFacts, EqualsTheTablesItPacksInFourBytes) {
  expect_equal_to_the_tables(17000, 47, 4);
}

TEST(NodeFacts, EqualsTheTablesItPacksInEightBytes) {
  expect_equal_to_the_tables(1 << 30, NodeFacts::kMaxClass + 1, 8);
}

TEST(NodeFacts, UnlabelledNodesOnlyAndNoNodes) {
  const NodeFacts facts(std::vector<int32_t>{0, 2}, std::vector<int32_t>{-1, -1}, std::vector<uint8_t>{7, 0});
  const Gathered g = gather(facts, {0, 1, 0});
  EXPECT_EQ(g.y, (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(g.degree, (std::vector<int32_t>{0, 2, 0}));
  EXPECT_EQ(gather(facts, {}).y.size(), 0u);
  const NodeFacts none(std::span<const int32_t>{}, std::span<const int32_t>{}, std::span<const uint8_t>{});
  EXPECT_EQ(none.num_nodes(), 0);
}

TEST(NodeFacts, RefusesWhatItCannotPack) {
  const std::vector<int32_t> one{1};
  const std::vector<uint8_t> bit{0};
  EXPECT_THROW(NodeFacts(one, std::vector<int32_t>{-2}, bit), Error);
  EXPECT_THROW(NodeFacts(one, std::vector<int32_t>{NodeFacts::kMaxClass + 1}, bit), Error);
  EXPECT_THROW(NodeFacts(std::vector<int32_t>{-1}, std::vector<int32_t>{0}, bit), Error);
  EXPECT_THROW(NodeFacts(one, std::vector<int32_t>{0}, std::vector<uint8_t>{8}), Error);
  EXPECT_THROW(NodeFacts(one, std::vector<int32_t>{0, 1}, bit), Error);
}

TEST(NodeFacts, RefusesOutputsOfAnotherSize) {
  const NodeFacts facts(std::vector<int32_t>{1, 2}, std::vector<int32_t>{0, 1}, std::vector<uint8_t>{0, 1});
  const std::vector<int64_t> n_id{0, 1};
  std::vector<int32_t> degree(2);
  std::vector<int64_t> y(1);
  bool masks[6];
  EXPECT_THROW(facts.gather(n_id, degree, y, masks), Error);
  y.resize(2);
  EXPECT_THROW(facts.gather(n_id, degree, y, {masks, 5}), Error);
  EXPECT_NO_THROW(facts.gather(n_id, degree, y, masks));
}

}  // namespace
}  // namespace dgcn

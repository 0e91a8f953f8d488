// graph/components.cpp (and graph/symmetry.cpp, which it relies on): counts,
// largest sizes and per-node ids on hand-drawn graphs, isolated nodes, both
// id widths, thread counts, and directed input.
#include "graph/components.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "fixtures.h"
#include "graph/symmetry.h"
#include "store_test_util.h"

namespace dgcn {
namespace {

Csr csr_of(const testing::EdgeList& e, EdgeOptions o = {}) {
  return build_csr(e.num_nodes, e.src, e.dst, o, 2, "test");
}

TEST(Components, HandDrawnGraphs) {
  // The eight-node fixture: square 0-1-2-3 with 4 off 2, and triangle 5-6-7.
  Components c = connected_components(csr_of(testing::eight_node_edges()), 2, true);
  EXPECT_EQ(c.count, 2);
  EXPECT_EQ(c.largest, 5);
  EXPECT_EQ(c.component, (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 1}));

  Components cycle = connected_components(csr_of(testing::cycle_edges(10)), 2);
  EXPECT_EQ(cycle.count, 1);
  EXPECT_EQ(cycle.largest, 10);
  EXPECT_TRUE(cycle.component.empty()) << "per-node ids only when asked for";

  // 0 - 1   2   3 - 4 - 5   6 (isolated nodes 2 and 6; numbering by smallest node)
  testing::EdgeList e{7, {}, {}};
  e.add(4, 5);
  e.add(1, 0);
  e.add(3, 4);
  Components small = connected_components(csr_of(e), 1, true);
  EXPECT_EQ(small.count, 4);
  EXPECT_EQ(small.largest, 3);
  EXPECT_EQ(small.component, (std::vector<int64_t>{0, 0, 1, 2, 2, 2, 3}));
}

TEST(Components, OnlyIsolatedNodesAndTheEmptyGraph) {
  Components lone = connected_components(csr_of(testing::EdgeList{5, {}, {}}), 2, true);
  EXPECT_EQ(lone.count, 5);
  EXPECT_EQ(lone.largest, 1);
  EXPECT_EQ(lone.component, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  Components empty = connected_components(csr_of(testing::EdgeList{0, {}, {}}), 2, true);
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.largest, 0);
  EXPECT_TRUE(empty.component.empty());
}

TEST(Components, SameAnswerForInt64IdsAndAnyThreadCount) {
  // k disjoint cycles of sizes 3..3+k-1, ids interleaved, plus isolated nodes.
  testing::EdgeList e{0, {}, {}};
  std::vector<std::vector<int64_t>> cycles;
  const int k = 6;
  int64_t n = 0;
  for (int c = 0; c < k; ++c) {
    cycles.emplace_back();
    for (int i = 0; i < 3 + c; ++i) cycles.back().push_back(n++);
  }
  // Shuffle ids so that components interleave in id order.
  std::vector<int64_t> rename(static_cast<size_t>(n + 4));
  std::iota(rename.begin(), rename.end(), 0);
  std::shuffle(rename.begin(), rename.end(), std::mt19937_64(5));
  for (const auto& cyc : cycles)
    for (size_t i = 0; i < cyc.size(); ++i) e.add(rename[cyc[i]], rename[cyc[(i + 1) % cyc.size()]]);
  e.num_nodes = n + 4;  // the last 4 (renamed) ids have no edges
  GraphStore s = testing::make_store(e);
  Components one = connected_components(s.graph, 1, true);
  EXPECT_EQ(one.count, k + 4);
  EXPECT_EQ(one.largest, 3 + k - 1);
  for (const auto& cyc : cycles)
    for (int64_t v : cyc) EXPECT_EQ(one.component[rename[v]], one.component[rename[cyc[0]]]);
  // Numbered in the order of each component's smallest node.
  std::vector<int64_t> first_of(static_cast<size_t>(one.count), -1);
  for (int64_t v = 0; v < e.num_nodes; ++v)
    if (first_of[one.component[v]] < 0) first_of[one.component[v]] = v;
  EXPECT_TRUE(std::is_sorted(first_of.begin(), first_of.end()));

  Components wide = connected_components(testing::with_int64_ids(s).graph, 3, true);
  EXPECT_EQ(wide.count, one.count);
  EXPECT_EQ(wide.largest, one.largest);
  EXPECT_EQ(wide.component, one.component);
}

TEST(Components, DirectedInputGivesWeakComponents) {
  // 1 -> 0, 2 -> 1, 3 -> 4 stored one way only: {0,1,2} and {3,4}.
  testing::EdgeList e{5, {}, {}};
  e.add(1, 0);
  e.add(2, 1);
  e.add(3, 4);
  EdgeOptions directed;
  directed.symmetrize = false;
  Csr g = csr_of(e, directed);
  EXPECT_FALSE(is_symmetric(g, 2));
  Components c = connected_components(g, 2, true);
  EXPECT_EQ(c.count, 2);
  EXPECT_EQ(c.largest, 3);
  EXPECT_EQ(c.component, (std::vector<int64_t>{0, 0, 0, 1, 1}));
}

TEST(Symmetry, RandomGraphsAndOneMissingReverse) {
  // Symmetric random graphs pass, for both widths and any thread count; the
  // same graph with any single entry removed does not.
  std::mt19937_64 rng(9);
  testing::EdgeList e{3000, {}, {}};
  for (int i = 0; i < 20000; ++i)
    e.add(static_cast<int64_t>(rng() % 3000), static_cast<int64_t>(rng() % 3000));
  GraphStore s = testing::make_store(e);
  EXPECT_TRUE(is_symmetric(s.graph, 1));
  EXPECT_TRUE(is_symmetric(s.graph, 3));
  EXPECT_TRUE(is_symmetric(testing::with_int64_ids(s).graph, 2));
  auto p = s.graph.indptr();
  auto idx = s.graph.indices<int32_t>();
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t drop = static_cast<int64_t>(rng() % static_cast<uint64_t>(s.num_edges()));
    std::vector<int64_t> q(p.begin(), p.end());
    for (size_t v = 0; v + 1 < q.size(); ++v)
      if (p[v + 1] > drop) --q[v + 1];
    std::vector<int32_t> ids(idx.begin(), idx.end());
    ids.erase(ids.begin() + drop);
    Csr g(s.num_nodes(), Buffer::from_vector(std::move(q)), Buffer::from_vector(std::move(ids)),
          IdWidth::k32);
    EXPECT_FALSE(is_symmetric(g, 2)) << "entry " << drop << " dropped";
  }
}

TEST(Symmetry, DetectsMissingReversesAndRepeats) {
  Csr sym = csr_of(testing::eight_node_edges());
  EXPECT_TRUE(is_symmetric(sym, 2));
  bool copied = true;
  Csr same = undirected_csr(sym, 2, &copied);
  EXPECT_FALSE(copied);
  EXPECT_EQ(same.indices_buffer().data(), sym.indices_buffer().data()) << "a symmetric CSR is not copied";

  // Row 0 = [1], row 1 = [] : 0 -> 1 without 1 -> 0.
  std::vector<int64_t> p = {0, 1, 1};
  std::vector<int32_t> idx = {1};
  Csr one_way(2, Buffer::from_vector(std::move(p)), Buffer::from_vector(std::move(idx)), IdWidth::k32);
  EXPECT_FALSE(is_symmetric(one_way, 1));
  Csr both = undirected_csr(one_way, 1, &copied);
  EXPECT_TRUE(copied);
  EXPECT_TRUE(is_symmetric(both, 1));
  EXPECT_EQ(both.num_edges(), 2);

  // Symmetric with row 0 unsorted: the check does not need sorted rows.
  std::vector<int64_t> p2 = {0, 2, 3, 4};
  std::vector<int32_t> idx2 = {2, 1, 0, 0};
  Csr unsorted(3, Buffer::from_vector(std::move(p2)), Buffer::from_vector(std::move(idx2)), IdWidth::k32);
  EXPECT_TRUE(is_symmetric(unsorted, 1));

  // A repeat in one direction only: not symmetric as a multiset.
  std::vector<int64_t> p3 = {0, 2, 3};
  std::vector<int32_t> idx3 = {1, 1, 0};
  Csr repeat(2, Buffer::from_vector(std::move(p3)), Buffer::from_vector(std::move(idx3)), IdWidth::k32);
  EXPECT_FALSE(is_symmetric(repeat, 1));
  EXPECT_EQ(undirected_csr(repeat, 1).num_edges(), 2);
}

}  // namespace
}  // namespace dgcn

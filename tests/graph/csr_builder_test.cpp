#include "graph/csr_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "fixtures.h"

namespace dgcn {
namespace {

std::vector<int64_t> row(const Csr& g, int64_t v) {
  auto p = g.indptr();
  auto ids = g.indices<int32_t>();
  return {ids.begin() + p[v], ids.begin() + p[v + 1]};
}

TEST(CsrBuilder, SymmetrizesSortsAndDropsLoopsAndDuplicates) {
  std::vector<int64_t> src = {0, 1, 2, 2, 1, 3, 0};
  std::vector<int64_t> dst = {1, 0, 2, 0, 2, 3, 1};  // 0-1 thrice, 2-2 loop, 3-3 loop
  EdgeStats stats;
  Csr g = build_csr(4, src, dst, EdgeOptions{}, 2, "t", &stats);
  EXPECT_EQ(row(g, 0), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(row(g, 1), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(row(g, 2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(row(g, 3), (std::vector<int64_t>{}));
  EXPECT_EQ(stats.input_edges, 7);
  EXPECT_EQ(stats.self_loops_dropped, 2);
  EXPECT_EQ(stats.duplicates_dropped, 4);  // 0->1 x3 and 1->0 x3 keep one each
  EXPECT_EQ(stats.output_entries, 6);
}

TEST(CsrBuilder, FlagsKeepWhatTheyName) {
  std::vector<int64_t> src = {0, 0, 1};
  std::vector<int64_t> dst = {1, 1, 1};
  EdgeOptions keep{.symmetrize = false, .drop_self_loops = false, .drop_duplicates = false};
  Csr g = build_csr(2, src, dst, keep, 1);
  EXPECT_EQ(row(g, 0), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(row(g, 1), (std::vector<int64_t>{1}));
  EdgeOptions loops_once{.symmetrize = true, .drop_self_loops = false, .drop_duplicates = true};
  Csr h = build_csr(2, src, dst, loops_once, 1);
  EXPECT_EQ(row(h, 1), (std::vector<int64_t>{0, 1}));  // a kept self-loop is one entry, not two
}

TEST(CsrBuilder, ResultIndependentOfThreadCountAndEdgeOrder) {
  std::mt19937_64 rng(7);
  const int64_t n = 5000;
  std::vector<int64_t> src, dst;
  for (int i = 0; i < 60000; ++i) {
    src.push_back(static_cast<int64_t>(rng() % n));
    dst.push_back(static_cast<int64_t>(rng() % 97));  // hubs: many duplicates
  }
  Csr a = build_csr(n, src, dst, EdgeOptions{}, 1);
  std::vector<size_t> order(src.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int64_t> src2, dst2;
  for (size_t i : order) {
    // also swap direction of every other edge: symmetrized result is the same
    if (i % 2) {
      src2.push_back(dst[i]);
      dst2.push_back(src[i]);
    } else {
      src2.push_back(src[i]);
      dst2.push_back(dst[i]);
    }
  }
  Csr b = build_csr(n, src2, dst2, EdgeOptions{}, 4);
  ASSERT_EQ(a.num_edges(), b.num_edges());
  EXPECT_TRUE(std::equal(a.indptr().begin(), a.indptr().end(), b.indptr().begin()));
  auto ai = a.indices<int32_t>(), bi = b.indices<int32_t>();
  EXPECT_TRUE(std::equal(ai.begin(), ai.end(), bi.begin()));
  // Every input edge is present both ways, and every row is strictly increasing.
  for (size_t i = 0; i < src.size(); i += 97) {
    if (src[i] == dst[i]) continue;
    auto r = row(a, src[i]);
    EXPECT_TRUE(std::binary_search(r.begin(), r.end(), dst[i]));
    auto q = row(a, dst[i]);
    EXPECT_TRUE(std::binary_search(q.begin(), q.end(), src[i]));
  }
  for (int64_t v = 0; v < n; ++v) {
    auto r = row(a, v);
    EXPECT_TRUE(std::adjacent_find(r.begin(), r.end(), std::greater_equal<>()) == r.end());
  }
}

TEST(CsrBuilder, RejectsIdsOutOfRange) {
  std::vector<int64_t> src = {0, 1, 5};
  std::vector<int64_t> dst = {1, 2, 0};
  try {
    build_csr(3, src, dst, EdgeOptions{}, 2, "edges.csv");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "edges.csv: source id of edge 2 is 5, not a node id in [0, 3)");
  }
  std::vector<int64_t> short_dst = {1};
  EXPECT_THROW(build_csr(3, src, short_dst, EdgeOptions{}, 2), Error);
}

TEST(CsrBuilder, FixturesHaveExpectedShape) {
  EXPECT_EQ(testing::make_store(testing::cycle_edges(10)).num_edges(), 20);
  EXPECT_EQ(testing::make_store(testing::star_edges(10)).graph.degree(0), 9);
  EXPECT_EQ(testing::make_store(testing::clique_edges(6)).num_edges(), 30);
  auto eight = testing::make_store(testing::eight_node_edges());
  EXPECT_EQ(eight.num_edges(), 16);
  EXPECT_EQ(eight.graph.degree(2), 3);
}

}  // namespace
}  // namespace dgcn

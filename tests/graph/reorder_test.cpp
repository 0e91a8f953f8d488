// graph/reorder.cpp: RCM gives a permutation with a small bandwidth, and
// permute() moves every node array consistently (CSR, features, labels,
// degrees, splits), keeps the store valid, and rejects non-permutations.
#include "graph/reorder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "fixtures.h"
#include "graph/symmetry.h"
#include "store_test_util.h"

namespace dgcn {
namespace {

using testing::EdgeList;

// `e` with node v renamed to shuffle[v] (a seeded random permutation).
EdgeList shuffled(const EdgeList& e, uint64_t seed) {
  std::vector<int64_t> rename(static_cast<size_t>(e.num_nodes));
  std::iota(rename.begin(), rename.end(), 0);
  std::shuffle(rename.begin(), rename.end(), std::mt19937_64(seed));
  EdgeList out{e.num_nodes, {}, {}};
  for (size_t i = 0; i < e.src.size(); ++i) out.add(rename[e.src[i]], rename[e.dst[i]]);
  return out;
}

EdgeList path_edges(int64_t n) {
  EdgeList e{n, {}, {}};
  for (int64_t v = 0; v + 1 < n; ++v) e.add(v, v + 1);
  return e;
}

// w x h grid, node (x, y) = y * w + x.
EdgeList grid_edges(int64_t w, int64_t h) {
  EdgeList e{w * h, {}, {}};
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      if (x + 1 < w) e.add(y * w + x, y * w + x + 1);
      if (y + 1 < h) e.add(y * w + x, (y + 1) * w + x);
    }
  return e;
}

using testing::random_edges;

void expect_permutation(const std::vector<int64_t>& perm, int64_t n) {
  ASSERT_EQ(static_cast<int64_t>(perm.size()), n);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  EXPECT_EQ(sorted, ids);
}

std::set<std::pair<int64_t, int64_t>> entries_of(const Csr& g) {
  std::set<std::pair<int64_t, int64_t>> out;
  auto p = g.indptr();
  g.visit_indices([&](auto idx) {
    for (int64_t u = 0; u < g.num_nodes(); ++u)
      for (int64_t e = p[u]; e < p[u + 1]; ++e) out.emplace(u, idx[e]);
  });
  return out;
}

// Every node array of `after` is `before`'s, renamed by perm[new] = old.
void expect_follows(const GraphStore& before, const GraphStore& after, const std::vector<int64_t>& perm) {
  const int64_t n = before.num_nodes();
  std::vector<int64_t> inv = inverse_permutation(perm, n);
  after.validate("permuted", 2);
  ASSERT_EQ(after.num_nodes(), n);
  ASSERT_EQ(after.num_edges(), before.num_edges());
  EXPECT_EQ(after.graph.id_width(), before.graph.id_width());
  // (u, v) is an entry before iff (inv[u], inv[v]) is one after.
  std::set<std::pair<int64_t, int64_t>> renamed;
  for (auto [u, v] : entries_of(before.graph)) renamed.emplace(inv[u], inv[v]);
  EXPECT_EQ(renamed, entries_of(after.graph));
  auto p = after.graph.indptr();
  after.graph.visit_indices([&](auto idx) {
    for (int64_t u = 0; u < n; ++u)
      EXPECT_TRUE(std::is_sorted(idx.begin() + p[u], idx.begin() + p[u + 1])) << "row " << u << " unsorted";
  });
  for (int64_t v = 0; v < n; ++v) {
    const int64_t w = inv[v];
    EXPECT_EQ(after.degrees()[w], before.degrees()[v]);
    auto fa = after.features_of(w), fb = before.features_of(v);
    EXPECT_TRUE(std::equal(fa.begin(), fa.end(), fb.begin(), fb.end())) << "features of node " << v;
    if (before.task == Task::kSingleLabel) {
      EXPECT_EQ(after.label(w), before.label(v));
    }
    if (before.task == Task::kMultiLabel) {
      for (int64_t c = 0; c < before.num_classes; ++c)
        EXPECT_EQ(after.has_label(w, c), before.has_label(v, c));
    }
  }
  auto renamed_split = [&](std::span<const int64_t> ids) {
    std::vector<int64_t> out;
    for (int64_t v : ids) out.push_back(inv[v]);
    std::sort(out.begin(), out.end());
    return out;
  };
  auto vec = [](std::span<const int64_t> s) { return std::vector<int64_t>(s.begin(), s.end()); };
  EXPECT_EQ(vec(after.train_nodes()), renamed_split(before.train_nodes()));
  EXPECT_EQ(vec(after.valid_nodes()), renamed_split(before.valid_nodes()));
  EXPECT_EQ(vec(after.test_nodes()), renamed_split(before.test_nodes()));
}

TEST(Bandwidth, WorkedExample) {
  // The path 0 - 3 - 1 - 4 - 2 of graph/reorder.h.
  EdgeList e{5, {0, 3, 1, 4}, {3, 1, 4, 2}};
  GraphStore s = testing::make_store(e);
  Bandwidth b = bandwidth(s.graph, 2);
  EXPECT_EQ(b.max, 3);
  EXPECT_DOUBLE_EQ(b.mean, 2.5);
  std::vector<int64_t> perm = {2, 4, 1, 3, 0};
  EXPECT_EQ(inverse_permutation(perm, 5), (std::vector<int64_t>{4, 2, 0, 3, 1}));
  PermuteReport r;
  GraphStore p = permute(s, perm, 2, "test", &r);
  EXPECT_EQ(r.before.max, 3);
  EXPECT_EQ(r.after.max, 1);
  EXPECT_DOUBLE_EQ(r.after.mean, 1.0);
  expect_follows(s, p, perm);
  std::vector<int64_t> rcm = rcm_ordering(s.graph, 2);
  EXPECT_TRUE(rcm == perm || rcm == std::vector<int64_t>(perm.rbegin(), perm.rend()))
      << ::testing::PrintToString(rcm);
  EXPECT_EQ(bandwidth(Csr(), 1).max, 0);
}

TEST(Rcm, IsAPermutationAndPermutedStoresFollowTheirNodes) {
  for (const auto& [name, edges] :
       std::vector<std::pair<std::string, EdgeList>>{{"eight", testing::eight_node_edges()},
                                                     {"star", testing::star_edges(9)},
                                                     {"random", random_edges(300, 500, 3)},
                                                     {"isolated", EdgeList{6, {1}, {4}}}}) {
    SCOPED_TRACE(name);
    GraphStore s = testing::make_store(edges);
    std::vector<int64_t> perm = rcm_ordering(s.graph, 2);
    expect_permutation(perm, s.num_nodes());
    EXPECT_EQ(rcm_ordering(s.graph, 1), perm) << "depends on the thread count";
    expect_follows(s, permute(s, perm, 2, "rcm"), perm);
    expect_follows(s, permute(s, perm, 1, "rcm"), perm);

    GraphStore wide = testing::with_int64_ids(s);
    EXPECT_EQ(rcm_ordering(wide.graph, 2), perm) << "depends on the id width";
    expect_follows(wide, permute(wide, perm, 3, "rcm"), perm);

    GraphStore multi = testing::with_multi_labels(s);
    expect_follows(multi, permute(multi, perm, 2, "rcm"), perm);

    GraphStore graph_only = testing::bare(edges);
    expect_follows(graph_only, permute(graph_only, perm, 2, "rcm"), perm);
  }
}

TEST(Rcm, ShrinksTheBandwidthOfShuffledPathsAndGrids) {
  GraphStore path = testing::make_store(shuffled(path_edges(500), 1));
  EXPECT_GT(bandwidth(path.graph, 2).max, 100);
  PermuteReport r;
  GraphStore ordered = permute(path, rcm_ordering(path.graph, 2), 2, "rcm", &r);
  EXPECT_EQ(r.after.max, 1);
  EXPECT_DOUBLE_EQ(r.after.mean, 1.0);
  EXPECT_EQ(bandwidth(ordered.graph, 1).max, 1);

  // A breadth-first order puts a grid's anti-diagonals (at most min(w, h)
  // nodes each) one after another, so no edge spans more than two of them.
  const int64_t w = 20, h = 30;
  GraphStore grid = testing::make_store(shuffled(grid_edges(w, h), 2));
  GraphStore g2 = permute(grid, rcm_ordering(grid.graph, 2), 2, "rcm", &r);
  EXPECT_GT(r.before.max, 10 * w);
  EXPECT_LE(r.after.max, 2 * std::min(w, h));
  EXPECT_LT(r.after.mean, r.before.mean / 10);
}

TEST(Rcm, DirectedGraphsAreOrderedByTheirUndirectedVersion) {
  EdgeOptions directed;
  directed.symmetrize = false;
  EdgeList e = shuffled(path_edges(50), 4);
  GraphStore s = testing::make_store(e);
  s.graph = build_csr(e.num_nodes, e.src, e.dst, directed, 2, "directed");
  s.degree = degrees_of(s.graph, 2);
  ASSERT_FALSE(is_symmetric(s.graph, 2));
  std::vector<int64_t> perm = rcm_ordering(s.graph, 2);
  expect_permutation(perm, 50);
  GraphStore p = permute(s, perm, 2, "rcm");
  expect_follows(s, p, perm);
  EXPECT_EQ(bandwidth(p.graph, 2).max, 1);
}

TEST(Permute, RejectsWhatIsNotAPermutation) {
  GraphStore s = testing::make_store(testing::cycle_edges(4));
  auto error = [&](std::vector<int64_t> perm) {
    return testing::error_of([&] { permute(s, perm, 2, "rcm"); });
  };
  EXPECT_NE(error({0, 1, 2}).find("permute: rcm order: has 3 entries for 4 nodes"), std::string::npos);
  EXPECT_NE(error({0, 1, 4, 2}).find("entry 2 is 4, not a node id in [0, 4)"), std::string::npos);
  EXPECT_NE(error({0, -1, 2, 3}).find("entry 1 is -1"), std::string::npos);
  EXPECT_NE(error({3, 1, 3, 0}).find("node 3 appears twice (entries 0 and 2)"), std::string::npos);
}

TEST(Permute, AppendsToTheMetadata) {
  GraphStore s = testing::make_store(testing::cycle_edges(5));
  s.metadata_json = R"({"reader":"fixture"})";
  std::vector<int64_t> perm = {4, 3, 2, 1, 0};
  GraphStore once = permute(s, perm, 1, "rcm");
  EXPECT_NE(once.metadata_json.find(R"("reader":"fixture")"), std::string::npos) << once.metadata_json;
  EXPECT_NE(once.metadata_json.find(R"("reorder":[{"bandwidth_after":)"), std::string::npos)
      << once.metadata_json;
  GraphStore twice = permute(once, perm, 1, "reverse");
  EXPECT_NE(twice.metadata_json.find(R"("method":"rcm"},{)"), std::string::npos) << twice.metadata_json;
  EXPECT_NE(twice.metadata_json.find(R"("method":"reverse"}])"), std::string::npos) << twice.metadata_json;
  s.metadata_json = "not json";
  EXPECT_NE(permute(s, perm, 1, "rcm").metadata_json.find(R"("metadata":"not json")"), std::string::npos);
}

TEST(Permute, EmptyStore) {
  GraphStore s = testing::bare(EdgeList{0, {}, {}});
  EXPECT_TRUE(rcm_ordering(s.graph, 2).empty());
  GraphStore p = permute(s, {}, 2, "rcm");
  p.validate("empty", 1);
  EXPECT_EQ(p.num_nodes(), 0);
}

}  // namespace
}  // namespace dgcn

#include "sampling/neighbor_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <map>
#include <numeric>
#include <set>

#include "base/error.h"
#include "fixtures.h"
#include "sampling/cpu/neighbor_kernel.h"
#include "test_graphs.h"

namespace dgcn {
namespace {

using testing::same_batch;

using testing::EdgeList;

// Structural invariants every batch must satisfy, for any fanouts.
void expect_well_formed(const Csr& g, const SampledBatch& b, std::span<const int64_t> seeds,
                        const SamplerOptions& o) {
  const int L = static_cast<int>(o.fanouts.size());
  ASSERT_EQ(b.num_seeds, static_cast<int64_t>(seeds.size()));
  ASSERT_EQ(b.num_nodes_per_hop.size(), static_cast<size_t>(L + 1));
  ASSERT_EQ(b.num_edges_per_hop.size(), static_cast<size_t>(L));
  ASSERT_EQ(b.nodes_within(L), static_cast<int64_t>(b.n_id.size()));
  ASSERT_TRUE(std::equal(seeds.begin(), seeds.end(), b.n_id.begin()));
  std::set<int64_t> distinct(b.n_id.begin(), b.n_id.end());
  ASSERT_EQ(distinct.size(), b.n_id.size()) << "n_id repeats a node";

  ASSERT_EQ(b.num_layers(), L);
  const Block& full = b.blocks[0];
  ASSERT_EQ(full.num_src, static_cast<int64_t>(b.n_id.size()));
  ASSERT_EQ(full.num_dst, b.nodes_within(L - 1));
  ASSERT_EQ(full.indptr.size(), static_cast<size_t>(full.num_dst + 1));
  ASSERT_EQ(full.indptr[0], 0);
  ASSERT_EQ(full.indptr.back(), full.num_edges());
  int64_t total_edges = std::accumulate(b.num_edges_per_hop.begin(), b.num_edges_per_hop.end(), int64_t{0});
  ASSERT_EQ(full.num_edges(), total_edges);

  auto indptr = g.indptr();
  int64_t next_new = b.num_seeds;  // new nodes must appear in order of first use
  int64_t row = 0;
  for (int h = 0; h < L; ++h) {
    int64_t hop_edges = 0;
    for (int64_t n = 0; n < b.num_nodes_per_hop[h]; ++n, ++row) {
      const int64_t v = b.n_id[row];
      const int64_t degree = indptr[v + 1] - indptr[v];
      const int64_t k = o.fanouts[h];
      const int64_t want = k < 0 ? degree : o.replace ? (degree > 0 ? k : 0) : std::min(k, degree);
      ASSERT_EQ(full.indptr[row + 1] - full.indptr[row], want) << "row " << row << " (node " << v << ")";
      hop_edges += want;
      std::set<int64_t> row_targets;
      std::set<int64_t> neighbours;
      g.visit_indices([&](auto idx) {
        for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) neighbours.insert(idx[e]);
      });
      for (int64_t e = full.indptr[row]; e < full.indptr[row + 1]; ++e) {
        const int32_t local = full.indices[e];
        ASSERT_GE(local, 0);
        ASSERT_LT(local, b.nodes_within(h + 1)) << "edge leaves the next hop";
        ASSERT_LE(local, next_new) << "new nodes must be numbered in order of first appearance";
        if (local == next_new) ++next_new;
        const int64_t u = b.n_id[local];
        ASSERT_TRUE(neighbours.count(u)) << "sampled edge " << v << " -> " << u << " is not in the graph";
        const bool fresh = row_targets.insert(u).second;
        if (!o.replace) {
          ASSERT_TRUE(fresh) << "duplicate neighbour " << u << " of " << v;
        }
      }
    }
    ASSERT_EQ(hop_edges, b.num_edges_per_hop[h]);
  }
  ASSERT_EQ(next_new, static_cast<int64_t>(b.n_id.size())) << "a node of n_id is no edge's target";

  for (int l = 1; l < L; ++l) {
    const Block& blk = b.blocks[l];
    ASSERT_EQ(blk.num_dst, b.nodes_within(L - 1 - l));
    ASSERT_EQ(blk.num_src, b.nodes_within(L - l));
    ASSERT_TRUE(std::equal(blk.indptr.begin(), blk.indptr.end(), full.indptr.begin()));
    ASSERT_EQ(blk.indptr.size(), static_cast<size_t>(blk.num_dst + 1));
    ASSERT_TRUE(std::equal(blk.indices.begin(), blk.indices.end(), full.indices.begin()));
    ASSERT_EQ(blk.num_edges(), blk.indptr.back());
  }
}

// Nodes in Boost's multi-source BFS discovery order with their hop distance.
// setS keeps each vertex's out-edges ordered by target, the order of CSR rows.
std::vector<std::pair<int64_t, int>> boost_bfs(const EdgeList& edges, std::span<const int64_t> seeds) {
  using G = boost::adjacency_list<boost::setS, boost::vecS, boost::undirectedS>;
  G g(edges.num_nodes);
  for (size_t i = 0; i < edges.src.size(); ++i) {
    if (edges.src[i] != edges.dst[i]) boost::add_edge(edges.src[i], edges.dst[i], g);
  }
  std::vector<int> dist(edges.num_nodes, 0);
  std::vector<int64_t> order;
  auto recorder = boost::make_bfs_visitor(
      std::make_pair(boost::record_distances(dist.data(), boost::on_tree_edge()),
                     boost::write_property(boost::typed_identity_property_map<size_t>(),
                                           std::back_inserter(order), boost::on_discover_vertex())));
  boost::queue<G::vertex_descriptor> queue;
  std::vector<boost::default_color_type> color(edges.num_nodes);
  std::vector<G::vertex_descriptor> sources(seeds.begin(), seeds.end());
  boost::breadth_first_search(g, sources.begin(), sources.end(), queue, recorder, color.data());
  std::vector<std::pair<int64_t, int>> out;
  for (int64_t v : order) out.emplace_back(v, dist[v]);
  return out;
}

struct ExactCase {
  std::string name;
  EdgeList edges;
  std::vector<int64_t> seeds;
};

TEST(NeighborSampler, FullNeighbourhoodMatchesBoostBfs) {
  std::vector<ExactCase> cases = {
      {"cycle", testing::cycle_edges(10), {0}},
      {"cycle-2", testing::cycle_edges(11), {3, 9}},
      {"star-centre", testing::star_edges(9), {0}},
      {"star-leaves", testing::star_edges(9), {5, 2}},
      {"clique", testing::clique_edges(6), {4}},
      {"eight", testing::eight_node_edges(), {4}},
      {"eight-both", testing::eight_node_edges(), {6, 1}},
      {"random", testing::skewed_random_edges(300, 4, 7), {17, 3, 250}},
  };
  for (const auto& c : cases) {
    GraphStore store = testing::make_store(c.edges);
    const int64_t max_degree = *std::max_element(store.degrees().begin(), store.degrees().end());
    for (int L = 1; L <= 4; ++L) {
      for (bool all : {true, false}) {
        SCOPED_TRACE(c.name + " L=" + std::to_string(L) + (all ? " fanout -1" : " fanout=max degree"));
        SamplerOptions o{.fanouts = std::vector<int64_t>(L, all ? -1 : max_degree)};
        SamplerScratch scratch;
        SampledBatch b = sample_neighbors(store.graph, c.seeds, o, BatchKey{1, 0, 0}, scratch);
        expect_well_formed(store.graph, b, c.seeds, o);
        // n_id is the BFS discovery order up to L hops, hop by hop.
        std::vector<int64_t> expected_nodes;
        std::vector<int64_t> expected_per_hop(L + 1, 0);
        for (auto [v, d] : boost_bfs(c.edges, c.seeds)) {
          if (d > L) break;
          expected_nodes.push_back(v);
          expected_per_hop[d]++;
        }
        EXPECT_EQ(b.n_id, expected_nodes);
        EXPECT_EQ(b.num_nodes_per_hop, expected_per_hop);
        // Each sampled row is the node's whole row, in CSR order.
        auto indptr = store.graph.indptr();
        auto idx = store.graph.indices<int32_t>();
        const Block& full = b.blocks[0];
        for (int64_t r = 0; r < full.num_dst; ++r) {
          const int64_t v = b.n_id[r];
          std::vector<int64_t> got, want(idx.begin() + indptr[v], idx.begin() + indptr[v + 1]);
          for (int64_t e = full.indptr[r]; e < full.indptr[r + 1]; ++e)
            got.push_back(b.n_id[full.indices[e]]);
          ASSERT_EQ(got, want) << "row of node " << v;
        }
      }
    }
  }
}

TEST(NeighborSampler, InvariantsHoldOnRandomGraph) {
  GraphStore store = testing::make_store(testing::skewed_random_edges(3000, 12, 3));
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 3000; v += 11) seeds.push_back((v * 7919) % 3000);
  for (bool replace : {false, true}) {
    for (auto fanouts :
         std::vector<std::vector<int64_t>>{{5, 3, 2}, {40, 0}, {1}, {-1, 3}, {2, 2, 2, 2, 2}}) {
      SamplerOptions o{.fanouts = fanouts, .replace = replace};
      SCOPED_TRACE(fmt::format("fanouts {} replace {}", fmt::join(fanouts, ","), replace));
      SamplerScratch scratch;
      for (int64_t batch = 0; batch < 3; ++batch) {
        SampledBatch b = sample_neighbors(store.graph, seeds, o, BatchKey{5, 2, batch}, scratch);
        expect_well_formed(store.graph, b, seeds, o);
      }
    }
  }
}

TEST(NeighborSampler, SameKeySameBatchOnAnyThreadCount) {
  // 6000 seeds span 24 chunks at hop 0, so threads > 1 take the parallel path.
  GraphStore store = testing::make_store(testing::skewed_random_edges(40000, 10, 11));
  std::vector<int64_t> seeds;
  for (int64_t i = 0; i < 6000; ++i) seeds.push_back((i * 104729) % 40000);
  for (bool replace : {false, true}) {
    SamplerOptions o{.fanouts = {6, 4, 3}, .replace = replace};
    SamplerScratch s1;
    SampledBatch reference = sample_neighbors(store.graph, seeds, o, BatchKey{9, 1, 4}, s1);
    expect_well_formed(store.graph, reference, seeds, o);
    for (int threads : {2, 3, 16}) {
      o.num_threads = threads;
      SamplerScratch s;
      SampledBatch b = sample_neighbors(store.graph, seeds, o, BatchKey{9, 1, 4}, s);
      EXPECT_TRUE(same_batch(reference, b)) << threads << " threads, replace " << replace;
      // A reused scratch gives the same batch again (stale map entries are ignored).
      sample_neighbors(store.graph, seeds, o, BatchKey{9, 1, 5}, s, b);
      sample_neighbors(store.graph, seeds, o, BatchKey{9, 1, 4}, s, b);
      EXPECT_TRUE(same_batch(reference, b)) << threads << " threads, reused scratch";
    }
    o.num_threads = 1;
    SampledBatch other = sample_neighbors(store.graph, seeds, o, BatchKey{9, 1, 5}, s1);
    EXPECT_FALSE(same_batch(reference, other)) << "another batch index must give other samples";
    EXPECT_FALSE(same_batch(reference, sample_neighbors(store.graph, seeds, o, BatchKey{10, 1, 4}, s1)));
    EXPECT_FALSE(same_batch(reference, sample_neighbors(store.graph, seeds, o, BatchKey{9, 2, 4}, s1)));
  }
}

// Note [Per-node draws]: a node's picks depend on (key, hop, node) only, not
// on where it stands in the frontier; partitioned sampling relies on it.
TEST(NeighborSampler, ANodesPicksDoNotDependOnItsPlaceInTheFrontier) {
  GraphStore store = testing::make_store(testing::skewed_random_edges(20000, 12, 21));
  std::vector<int64_t> seeds;
  for (int64_t i = 0; i < 1500; ++i) seeds.push_back((i * 7919) % 20000);  // 6 chunks of 256
  std::vector<int64_t> reversed(seeds.rbegin(), seeds.rend());
  for (bool replace : {false, true}) {
    SamplerOptions o{.fanouts = {7}, .replace = replace};
    SamplerScratch s;
    const SampledBatch a = sample_neighbors(store.graph, seeds, o, BatchKey{4, 2, 9}, s);
    const SampledBatch b = sample_neighbors(store.graph, reversed, o, BatchKey{4, 2, 9}, s);
    // Each seed's sampled neighbours, in draw order, by global id.
    auto picks_of = [](const SampledBatch& batch) {
      std::map<int64_t, std::vector<int64_t>> out;
      const Block& block = batch.blocks[0];
      for (int64_t r = 0; r < batch.num_seeds; ++r) {
        for (int64_t e = block.indptr[r]; e < block.indptr[r + 1]; ++e)
          out[batch.n_id[r]].push_back(batch.n_id[block.indices[e]]);
      }
      return out;
    };
    const auto pa = picks_of(a), pb = picks_of(b);
    ASSERT_EQ(pa.size(), pb.size());
    EXPECT_TRUE(pa == pb) << "replace " << replace;
    // ... and another batch key draws others.
    const SampledBatch c = sample_neighbors(store.graph, seeds, o, BatchKey{4, 2, 10}, s);
    EXPECT_FALSE(picks_of(c) == pa);
  }
}

TEST(NeighborSampler, MapWindowWrapsAroundCleanly) {
  GraphStore store = testing::make_store(testing::skewed_random_edges(2000, 8, 5));
  std::vector<int64_t> seeds = {1, 50, 999, 1500};
  SamplerOptions o{.fanouts = {4, 4}};
  SamplerScratch fresh;
  SampledBatch reference = sample_neighbors(store.graph, seeds, o, BatchKey{3, 0, 0}, fresh);
  for (int threads : {1, 2}) {
    o.num_threads = threads;
    SamplerScratch s;
    sample_neighbors(store.graph, seeds, o, BatchKey{3, 0, 7}, s);
    // Next batches land at the end of the 32-bit value range; they must reset
    // the map rather than misread stale entries.
    s.impl().base = UINT32_MAX - 3000;
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(same_batch(reference, sample_neighbors(store.graph, seeds, o, BatchKey{3, 0, 0}, s)));
    }
  }
}

TEST(NeighborSampler, Int64IndicesGiveTheSameBatch) {
  GraphStore store = testing::make_store(testing::skewed_random_edges(1000, 8, 2));
  auto idx32 = store.graph.indices<int32_t>();
  std::vector<int64_t> idx64(idx32.begin(), idx32.end());
  Csr wide(store.num_nodes(), store.graph.indptr_buffer(), Buffer::from_vector(std::move(idx64)),
           IdWidth::k64);
  std::vector<int64_t> seeds = {0, 10, 500, 999};
  SamplerOptions o{.fanouts = {3, 3, 3}};
  SamplerScratch s;
  SampledBatch a = sample_neighbors(store.graph, seeds, o, BatchKey{1, 1, 1}, s);
  SampledBatch b = sample_neighbors(wide, seeds, o, BatchKey{1, 1, 1}, s);
  EXPECT_TRUE(same_batch(a, b));
}

// Pearson's chi-square statistic of observed counts against equal expectations.
double chi_square(const std::vector<int64_t>& counts, double expected) {
  double x = 0;
  for (int64_t c : counts)
    x += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  return x;
}

TEST(NeighborSampler, PicksLeavesOfAStarUniformly) {
  struct Case {
    int64_t leaves, k;
    bool replace;
    double critical;  // chi-square quantile at p = 0.001 for leaves - 1 degrees of freedom
  };
  // k = 5 uses Floyd's scan, k = 40 the marked variant; replace draws independently.
  for (Case c : {Case{20, 5, false, 43.82}, Case{20, 5, true, 43.82}, Case{100, 40, false, 148.23},
                 Case{100, 40, true, 148.23}}) {
    GraphStore store = testing::make_store(testing::star_edges(c.leaves + 1));
    SamplerOptions o{.fanouts = {c.k}, .replace = c.replace};
    SamplerScratch s;
    const int64_t trials = 4000;
    std::vector<int64_t> hits(c.leaves, 0);
    std::vector<int64_t> seeds = {0};
    for (int64_t t = 0; t < trials; ++t) {
      SampledBatch b = sample_neighbors(store.graph, seeds, o, BatchKey{42, 0, t}, s);
      ASSERT_EQ(b.num_edges_per_hop[0], c.k);
      for (int64_t e = 0; e < b.blocks[0].num_edges(); ++e) hits[b.n_id[b.blocks[0].indices[e]] - 1]++;
    }
    const double expected = static_cast<double>(trials * c.k) / static_cast<double>(c.leaves);
    EXPECT_LT(chi_square(hits, expected), c.critical)
        << "leaves " << c.leaves << " k " << c.k << " replace " << c.replace;
  }
}

TEST(NeighborSampler, RejectsBadInput) {
  GraphStore store = testing::make_store(testing::cycle_edges(5));
  SamplerScratch s;
  auto message = [&](std::vector<int64_t> seeds, SamplerOptions o) -> std::string {
    try {
      sample_neighbors(store.graph, seeds, o, BatchKey{}, s);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message({0, 5}, {.fanouts = {2}}), "sample_neighbors: seeds[1] = 5 is not a node id in [0, 5)");
  EXPECT_EQ(message({-1}, {.fanouts = {2}}), "sample_neighbors: seeds[0] = -1 is not a node id in [0, 5)");
  EXPECT_EQ(message({3, 1, 3}, {.fanouts = {2}}),
            "sample_neighbors: seed 3 appears twice (seeds[0] and seeds[2]); seeds must be distinct");
  EXPECT_EQ(message({0}, {.fanouts = {}}),
            "sample_neighbors: fanouts is empty; give one per layer, e.g. 15,10,5");
  EXPECT_EQ(message({0}, {.fanouts = {3, -2}}),
            "sample_neighbors: fanouts[1] = -2; a fanout is >= 0, or -1 for all neighbours");
  EXPECT_EQ(message({0}, {.fanouts = {3}, .num_threads = 0}),
            "sample_neighbors: num_threads = 0, expected >= 1");
  // After an error the scratch still works.
  std::vector<int64_t> seeds = {2};
  SampledBatch b = sample_neighbors(store.graph, seeds, {.fanouts = {-1}}, BatchKey{}, s);
  EXPECT_EQ(b.n_id, (std::vector<int64_t>{2, 1, 3}));
}

TEST(NeighborSampler, EmptySeedsGiveAnEmptyBatch) {
  GraphStore store = testing::make_store(testing::cycle_edges(5));
  SamplerScratch s;
  SampledBatch b = sample_neighbors(store.graph, {}, {.fanouts = {2, 2}}, BatchKey{}, s);
  EXPECT_TRUE(b.n_id.empty());
  EXPECT_EQ(b.num_nodes_per_hop, (std::vector<int64_t>{0, 0, 0}));
  ASSERT_EQ(b.blocks.size(), 2u);
  EXPECT_EQ(b.blocks[0].indptr, (std::vector<int64_t>{0}));
  EXPECT_EQ(b.blocks[1].num_edges(), 0);
}

}  // namespace
}  // namespace dgcn

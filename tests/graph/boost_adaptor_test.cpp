// graph/boost_adaptor.h: Boost.Graph sees exactly the CSR's nodes, rows and
// degrees, for both id widths, and Boost's BFS through it finds the distances
// worked out by hand and by a plain BFS over the arrays.
#include "graph/boost_adaptor.h"

#include <gtest/gtest.h>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/graph_concepts.hpp>
#include <boost/graph/visitors.hpp>
#include <random>
#include <vector>

#include "fixtures.h"
#include "store_test_util.h"

namespace dgcn {
namespace {

BOOST_CONCEPT_ASSERT((boost::IncidenceGraphConcept<CsrGraph<int32_t>>));
BOOST_CONCEPT_ASSERT((boost::AdjacencyGraphConcept<CsrGraph<int32_t>>));
BOOST_CONCEPT_ASSERT((boost::VertexListGraphConcept<CsrGraph<int32_t>>));
BOOST_CONCEPT_ASSERT((boost::IncidenceGraphConcept<CsrGraph<int64_t>>));
BOOST_CONCEPT_ASSERT((boost::AdjacencyGraphConcept<CsrGraph<int64_t>>));
BOOST_CONCEPT_ASSERT((boost::VertexListGraphConcept<CsrGraph<int64_t>>));
BOOST_CONCEPT_ASSERT((boost::ReadablePropertyMapConcept<
                      boost::property_map<CsrGraph<int32_t>, boost::vertex_index_t>::const_type, int64_t>));

// n nodes and m random undirected edges (fixed seed).
using testing::random_edges;

// Hop distances from `s` (-1 = unreachable) by Boost's BFS through the adaptor.
template <class Id>
std::vector<int64_t> boost_distances(const Csr& csr, int64_t s) {
  CsrGraph<Id> g(csr);
  std::vector<int64_t> dist(static_cast<size_t>(csr.num_nodes()), -1);
  dist[s] = 0;
  std::vector<boost::default_color_type> color(static_cast<size_t>(csr.num_nodes()));
  boost::breadth_first_search(
      g, s,
      boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge())))
          .color_map(boost::make_iterator_property_map(color.begin(), get(boost::vertex_index, g))));
  return dist;
}

// The same by a plain BFS over the arrays.
std::vector<int64_t> plain_distances(const Csr& csr, int64_t s) {
  std::vector<int64_t> dist(static_cast<size_t>(csr.num_nodes()), -1), queue{s};
  dist[s] = 0;
  auto p = csr.indptr();
  csr.visit_indices([&](auto idx) {
    for (size_t i = 0; i < queue.size(); ++i) {
      const int64_t u = queue[i];
      for (int64_t e = p[u]; e < p[u + 1]; ++e) {
        if (dist[idx[e]] < 0) {
          dist[idx[e]] = dist[u] + 1;
          queue.push_back(idx[e]);
        }
      }
    }
  });
  return dist;
}

template <class Id>
void expect_same_structure(const Csr& csr) {
  CsrGraph<Id> g(csr);
  ASSERT_EQ(num_vertices(g), csr.num_nodes());
  auto [vb, ve] = vertices(g);
  ASSERT_EQ(ve - vb, csr.num_nodes());
  auto p = csr.indptr();
  auto idx = csr.indices<Id>();
  for (int64_t v = 0; v < csr.num_nodes(); ++v) {
    EXPECT_EQ(vb[v], v);
    EXPECT_EQ(get(boost::vertex_index, g, v), v);
    EXPECT_EQ(get(get(boost::vertex_index, g), v), v);
    EXPECT_EQ(out_degree(v, g), csr.degree(v));
    EXPECT_EQ(degree(v, g), csr.degree(v));
    std::vector<int64_t> row(idx.begin() + p[v], idx.begin() + p[v + 1]);
    auto [ab, ae] = adjacent_vertices(v, g);
    EXPECT_EQ(std::vector<int64_t>(ab, ae), row) << "node " << v;
    std::vector<int64_t> targets;
    for (auto [eb, ee] = out_edges(v, g); eb != ee; ++eb) {
      EXPECT_EQ(source(*eb, g), v);
      targets.push_back(target(*eb, g));
    }
    EXPECT_EQ(targets, row) << "node " << v;
  }
}

struct Fixture {
  std::string name;
  testing::EdgeList edges;
};

std::vector<Fixture> fixtures() {
  return {{"cycle", testing::cycle_edges(9)},
          {"star", testing::star_edges(7)},
          {"clique", testing::clique_edges(5)},
          {"eight", testing::eight_node_edges()},
          {"random", random_edges(400, 700, 11)}};
}

TEST(BoostAdaptor, SeesTheCsrRowsAndDegreesInBothIdWidths) {
  for (const auto& f : fixtures()) {
    SCOPED_TRACE(f.name);
    GraphStore s = testing::make_store(f.edges);
    expect_same_structure<int32_t>(s.graph);
    GraphStore wide = testing::with_int64_ids(s);
    expect_same_structure<int64_t>(wide.graph);
  }
}

TEST(BoostAdaptor, ViewOfTheWrongWidthIsAnError) {
  GraphStore s = testing::make_store(testing::cycle_edges(4));
  EXPECT_NE(testing::error_of([&] { CsrGraph<int64_t> g(s.graph); }).find("indices are 32-bit"),
            std::string::npos);
}

TEST(BoostAdaptor, BreadthFirstSearchFindsTheHandWorkedDistances) {
  GraphStore cycle = testing::make_store(testing::cycle_edges(9));
  std::vector<int64_t> around = {0, 1, 2, 3, 4, 4, 3, 2, 1};  // min(v, 9 - v)
  EXPECT_EQ(boost_distances<int32_t>(cycle.graph, 0), around);
  EXPECT_EQ(boost_distances<int64_t>(testing::with_int64_ids(cycle).graph, 0), around);

  // 0-1-2-3 square with 4 off 2; 5-6-7 unreachable from 0.
  GraphStore eight = testing::make_store(testing::eight_node_edges());
  std::vector<int64_t> from0 = {0, 1, 2, 1, 3, -1, -1, -1};
  EXPECT_EQ(boost_distances<int32_t>(eight.graph, 0), from0);
  EXPECT_EQ(boost_distances<int64_t>(testing::with_int64_ids(eight).graph, 0), from0);

  GraphStore star = testing::make_store(testing::star_edges(6));
  EXPECT_EQ(boost_distances<int32_t>(star.graph, 3), (std::vector<int64_t>{1, 2, 2, 0, 2, 2}));
}

TEST(BoostAdaptor, BreadthFirstSearchMatchesAPlainBfsOnARandomGraph) {
  GraphStore s = testing::make_store(random_edges(400, 700, 11));
  GraphStore wide = testing::with_int64_ids(s);
  for (int64_t src : {0, 17, 399}) {
    const std::vector<int64_t> want = plain_distances(s.graph, src);
    EXPECT_EQ(boost_distances<int32_t>(s.graph, src), want) << "from " << src;
    EXPECT_EQ(boost_distances<int64_t>(wide.graph, src), want) << "from " << src;
  }
}

}  // namespace
}  // namespace dgcn

// Boost.Graph over a dgcn::Csr without copying it: `CsrGraph<Id>` is a typed
// view (Id = the CSR's index type, int32_t or int64_t) that models Boost's
// IncidenceGraph, AdjacencyGraph and VertexListGraph, with vertices = node ids
// (int64) and an identity vertex-index map, so algorithms such as
// boost::connected_components and boost::cuthill_mckee_ordering run on the
// store's own arrays.
//
//   Csr g = build_csr(...);            // symmetric: both directions stored
//   g.visit_indices([&](auto ids) {
//     using Id = typename decltype(ids)::value_type;
//     CsrGraph<Id> bg(g);
//     boost::connected_components(bg, ...);
//   });
//
// Why a typed view and not graph_traits<Csr> itself: the id width of a Csr is
// a run-time value, while Boost's iterator types are compile-time ones; a view
// per width keeps the inner loops free of a width branch (see
// Csr::visit_indices).
//
// Note [Undirected CSR]: graph_traits<CsrGraph>::directed_category is
// undirected_tag. Boost's undirected concept means "out_edges(v) lists every
// edge that touches v", which is exactly what a symmetrized CSR holds (each
// undirected edge is two entries, one in each endpoint's row).
// boost::connected_components requires undirected_tag (it static-asserts it),
// and Cuthill-McKee's BFS must reach a node's neighbours from both sides, so
// a directed tag would be wrong for both. The view does not check symmetry
// (that costs a pass over the edges): callers whose CSR may be directed use
// undirected_csr() (graph/symmetry.h) first. The two entries of one
// undirected edge are distinct edge descriptors, so algorithms that colour
// edges (boost::undirected_dfs) are not supported; none of ours needs them.
#pragma once

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/iterator/counting_iterator.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <boost/property_map/property_map.hpp>
#include <cstdint>
#include <span>
#include <utility>

#include "graph/csr.h"

namespace dgcn {

template <class Id>
class CsrGraph {
 public:
  // Views `g`'s arrays; `g` must outlive the view. Throws if g's indices are
  // not of type Id.
  explicit CsrGraph(const Csr& g)
      : num_nodes_(g.num_nodes()), indptr_(g.indptr()), indices_(g.indices<Id>()) {}

  int64_t num_nodes() const { return num_nodes_; }
  std::span<const int64_t> indptr() const { return indptr_; }
  std::span<const Id> indices() const { return indices_; }

 private:
  int64_t num_nodes_;
  std::span<const int64_t> indptr_;
  std::span<const Id> indices_;
};

// An edge is the CSR entry at `position` in the row of `source`; its target
// is indices[position].
struct CsrEdge {
  int64_t source = -1;
  int64_t position = -1;
  friend bool operator==(const CsrEdge&, const CsrEdge&) = default;
};

// Walks the entries of one row, yielding CsrEdge values.
class CsrOutEdgeIterator : public boost::iterator_facade<CsrOutEdgeIterator, CsrEdge,
                                                         std::random_access_iterator_tag, CsrEdge, int64_t> {
 public:
  CsrOutEdgeIterator() = default;
  CsrOutEdgeIterator(int64_t source, int64_t position) : edge_{source, position} {}

 private:
  friend class boost::iterator_core_access;
  CsrEdge dereference() const { return edge_; }
  bool equal(const CsrOutEdgeIterator& o) const { return edge_.position == o.edge_.position; }
  void increment() { ++edge_.position; }
  void decrement() { --edge_.position; }
  void advance(int64_t n) { edge_.position += n; }
  int64_t distance_to(const CsrOutEdgeIterator& o) const { return o.edge_.position - edge_.position; }
  CsrEdge edge_;
};

// Walks the neighbour ids of one row, widened to int64.
template <class Id>
class CsrAdjacencyIterator
    : public boost::iterator_facade<CsrAdjacencyIterator<Id>, int64_t, std::random_access_iterator_tag,
                                    int64_t, int64_t> {
 public:
  CsrAdjacencyIterator() = default;
  explicit CsrAdjacencyIterator(const Id* p) : p_(p) {}

 private:
  friend class boost::iterator_core_access;
  int64_t dereference() const { return static_cast<int64_t>(*p_); }
  bool equal(const CsrAdjacencyIterator& o) const { return p_ == o.p_; }
  void increment() { ++p_; }
  void decrement() { --p_; }
  void advance(int64_t n) { p_ += n; }
  int64_t distance_to(const CsrAdjacencyIterator& o) const { return o.p_ - p_; }
  const Id* p_ = nullptr;
};

struct CsrTraversalTag : boost::incidence_graph_tag,
                         boost::adjacency_graph_tag,
                         boost::vertex_list_graph_tag {};

}  // namespace dgcn

namespace boost {

template <class Id>
struct graph_traits<dgcn::CsrGraph<Id>> {
  using vertex_descriptor = int64_t;
  using edge_descriptor = dgcn::CsrEdge;
  using directed_category = undirected_tag;  // see Note [Undirected CSR]
  using edge_parallel_category = allow_parallel_edge_tag;
  using traversal_category = dgcn::CsrTraversalTag;

  using vertex_iterator = counting_iterator<int64_t>;
  using out_edge_iterator = dgcn::CsrOutEdgeIterator;
  using adjacency_iterator = dgcn::CsrAdjacencyIterator<Id>;
  using in_edge_iterator = void;
  using edge_iterator = void;

  using vertices_size_type = int64_t;
  using edges_size_type = int64_t;
  using degree_size_type = int64_t;

  static vertex_descriptor null_vertex() { return -1; }
};

// The identity map node id -> index, for algorithms that size their own
// colour or distance arrays.
template <class Id>
struct property_map<dgcn::CsrGraph<Id>, vertex_index_t> {
  using type = typed_identity_property_map<int64_t>;
  using const_type = type;
};

}  // namespace boost

namespace dgcn {

// The free functions Boost finds by argument-dependent lookup.

template <class Id>
int64_t num_vertices(const CsrGraph<Id>& g) {
  return g.num_nodes();
}

template <class Id>
std::pair<boost::counting_iterator<int64_t>, boost::counting_iterator<int64_t>> vertices(
    const CsrGraph<Id>& g) {
  return {boost::counting_iterator<int64_t>(0), boost::counting_iterator<int64_t>(g.num_nodes())};
}

template <class Id>
std::pair<CsrOutEdgeIterator, CsrOutEdgeIterator> out_edges(int64_t v, const CsrGraph<Id>& g) {
  return {CsrOutEdgeIterator(v, g.indptr()[v]), CsrOutEdgeIterator(v, g.indptr()[v + 1])};
}

template <class Id>
int64_t out_degree(int64_t v, const CsrGraph<Id>& g) {
  return g.indptr()[v + 1] - g.indptr()[v];
}

// Undirected graph: a node's degree is its out-degree (its row length).
template <class Id>
int64_t degree(int64_t v, const CsrGraph<Id>& g) {
  return out_degree(v, g);
}

template <class Id>
std::pair<CsrAdjacencyIterator<Id>, CsrAdjacencyIterator<Id>> adjacent_vertices(int64_t v,
                                                                                const CsrGraph<Id>& g) {
  const Id* row = g.indices().data();
  return {CsrAdjacencyIterator<Id>(row + g.indptr()[v]), CsrAdjacencyIterator<Id>(row + g.indptr()[v + 1])};
}

template <class Id>
int64_t source(const CsrEdge& e, const CsrGraph<Id>&) {
  return e.source;
}

template <class Id>
int64_t target(const CsrEdge& e, const CsrGraph<Id>& g) {
  return static_cast<int64_t>(g.indices()[e.position]);
}

template <class Id>
boost::typed_identity_property_map<int64_t> get(boost::vertex_index_t, const CsrGraph<Id>&) {
  return {};
}

template <class Id>
int64_t get(boost::vertex_index_t, const CsrGraph<Id>&, int64_t v) {
  return v;
}

}  // namespace dgcn

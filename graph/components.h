// Connected components of a graph, computed by boost::connected_components
// through the Boost.Graph adaptor (graph/boost_adaptor.h).
//
//   0 - 1   2   3 - 4 - 5     count = 3, largest = 3,
//                             component = [0, 0, 1, 2, 2, 2]
#pragma once

#include <cstdint>
#include <vector>

#include "graph/csr.h"

namespace dgcn {

struct Components {
  int64_t count = 0;    // number of components; an isolated node is one
  int64_t largest = 0;  // nodes in the largest component (0 for an empty graph)
  // component[v] in [0, count) when asked for, else empty. Components are
  // numbered in the order of their smallest node id, so the numbering depends
  // only on the graph.
  std::vector<int64_t> component;
};

// The (weakly) connected components of `g`. A symmetric CSR is used as is; a
// directed one is symmetrized first (a copy; see undirected_csr in
// graph/symmetry.h). Memory beyond the result: a 2-bit colour and an 8-byte
// component id per node, plus Boost's explicit DFS stack (no recursion; at
// most one ~64-byte frame per node on the current DFS path).
Components connected_components(const Csr& g, int num_threads, bool per_node = false);

}  // namespace dgcn

#include "graph/components.h"

#include <algorithm>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/two_bit_color_map.hpp>
#include <boost/property_map/property_map.hpp>

#include "graph/boost_adaptor.h"
#include "graph/symmetry.h"

namespace dgcn {

namespace {

template <class Id>
int64_t label_components(const Csr& g, std::vector<int64_t>& component) {
  CsrGraph<Id> bg(g);
  const auto index = get(boost::vertex_index, bg);
  // Two bits of colour per node (600 KiB for products) stay in L2, where a
  // 4-byte default_color_type per node would not: the DFS looks a colour up
  // for every CSR entry, in random order.
  boost::two_bit_color_map<decltype(index)> color(static_cast<size_t>(g.num_nodes()), index);
  // Boost's DFS keeps its own stack (no recursion), and visits roots in node
  // order, which gives the smallest-node-first numbering.
  return boost::connected_components(bg, boost::make_iterator_property_map(component.begin(), index),
                                     boost::color_map(color));
}

}  // namespace

Components connected_components(const Csr& g, int num_threads, bool per_node) {
  require_whole_graph(g, "connected components");
  const Csr u = undirected_csr(g, num_threads);
  Components out;
  const int64_t n = u.num_nodes();
  if (n == 0) return out;
  std::vector<int64_t> component(static_cast<size_t>(n));
  out.count = u.visit_indices([&](auto idx) {
    using Id = typename decltype(idx)::value_type;
    return label_components<Id>(u, component);
  });
  std::vector<int64_t> size(static_cast<size_t>(out.count), 0);
  for (int64_t c : component) ++size[c];
  out.largest = *std::max_element(size.begin(), size.end());
  if (per_node) out.component = std::move(component);
  return out;
}

}  // namespace dgcn

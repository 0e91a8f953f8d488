#include "graph/reorder.h"

#include <algorithm>
#include <boost/graph/cuthill_mckee_ordering.hpp>
#include <boost/graph/two_bit_color_map.hpp>
#include <boost/property_map/property_map.hpp>
#include <cstring>
#include <deque>
#include <nlohmann/json.hpp>

#include "base/parallel.h"
#include "graph/boost_adaptor.h"
#include "graph/symmetry.h"

namespace dgcn {

Bandwidth bandwidth(const Csr& g, int num_threads) {
  const int64_t n = g.num_nodes();
  auto p = g.indptr();
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  // Per-chunk integer partials, so the sum is exact whatever the thread count.
  std::vector<int64_t> max_of(static_cast<size_t>(chunks), 0), sum_of(static_cast<size_t>(chunks), 0);
  g.visit_indices([&](auto idx) {
    parallel_for_chunks(n, kChunk, num_threads, [&](int64_t begin, int64_t end) {
      int64_t mx = 0, sum = 0;
      for (int64_t u = begin; u < end; ++u) {
        for (int64_t e = p[u]; e < p[u + 1]; ++e) {
          const int64_t d = idx[e] > u ? idx[e] - u : u - idx[e];
          mx = std::max(mx, d);
          sum += d;
        }
      }
      max_of[begin / kChunk] = mx;
      sum_of[begin / kChunk] = sum;
    });
  });
  Bandwidth b;
  int64_t sum = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    b.max = std::max(b.max, max_of[c]);
    sum += sum_of[c];
  }
  b.mean = g.num_edges() > 0 ? static_cast<double>(sum) / static_cast<double>(g.num_edges()) : 0.0;
  return b;
}

namespace {

// Note [RCM starting nodes]: boost::cuthill_mckee_ordering(G, perm, color,
// degree) finds a start per component with find_starting_node, whose BFS
// first resets the colour of *every* node of the graph. That is O(nodes) per
// BFS, so O(nodes x components) in all: hours on products (2.4 M nodes, tens
// of thousands of components). We pick the starts ourselves with the same
// George-Liu search (BFS from r; take the lowest-degree node of the last
// level; repeat while the eccentricity grows), over BFS runs that touch only
// their own component (each clears just the nodes it reached), and hand
// them to the overload that takes a start queue; that one runs one BFS per
// component over a shared colour map.
template <class Id>
class PeripheralSearch {
 public:
  explicit PeripheralSearch(const CsrGraph<Id>& g) : g_(g), flags_(static_cast<size_t>(g.num_nodes()), 0) {}

  // Whether an earlier search already covered v's component.
  bool seen(int64_t v) const { return flags_[v] & kDone; }

  // A pseudo-peripheral node of r's component (Boost's find_starting_node).
  int64_t find_start(int64_t r) {
    auto [ecc_r, x] = bfs(r);
    for (int64_t v : queue_) flags_[v] |= kDone;  // the first BFS reached the whole component
    auto [ecc_x, y] = bfs(x);
    while (ecc_x > ecc_r) {
      r = x;
      ecc_r = ecc_x;
      x = y;
      std::tie(ecc_x, y) = bfs(x);
    }
    return x;
  }

 private:
  static constexpr uint8_t kVisited = 1;  // reached by the current BFS
  static constexpr uint8_t kDone = 2;     // in a component already searched

  // (eccentricity of s, the lowest-degree node of the last BFS level; the
  // first in BFS order among equals). Leaves the visited nodes in queue_.
  std::pair<int64_t, int64_t> bfs(int64_t s) {
    queue_.clear();
    queue_.push_back(s);
    flags_[s] |= kVisited;
    auto p = g_.indptr();
    auto idx = g_.indices();
    int64_t level_begin = 0, ecc = 0;
    for (;;) {
      const int64_t level_end = static_cast<int64_t>(queue_.size());
      for (int64_t i = level_begin; i < level_end; ++i) {
        const int64_t u = queue_[i];
        for (int64_t e = p[u]; e < p[u + 1]; ++e) {
          const int64_t v = idx[e];
          if (!(flags_[v] & kVisited)) {
            flags_[v] |= kVisited;
            queue_.push_back(v);
          }
        }
      }
      if (static_cast<int64_t>(queue_.size()) == level_end) {
        int64_t best = queue_[level_begin];
        for (int64_t i = level_begin + 1; i < level_end; ++i) {
          if (out_degree(queue_[i], g_) < out_degree(best, g_)) best = queue_[i];
        }
        // Clear only what this BFS touched: O(component), not O(graph).
        for (int64_t v : queue_) flags_[v] &= static_cast<uint8_t>(~kVisited);
        return {ecc, best};
      }
      level_begin = level_end;
      ++ecc;
    }
  }

  const CsrGraph<Id>& g_;
  std::vector<uint8_t> flags_;  // kVisited | kDone per node: 1 byte, cache-friendly
  std::vector<int64_t> queue_;
};

template <class Id>
std::vector<int64_t> cuthill_mckee(const Csr& u) {
  CsrGraph<Id> g(u);
  const int64_t n = u.num_nodes();
  PeripheralSearch<Id> search(g);
  std::deque<int64_t> starts;
  for (int64_t v = 0; v < n; ++v) {
    if (!search.seen(v)) starts.push_back(search.find_start(v));
  }
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(n));
  // Two bits of colour per node stay in L2 (see graph/components.cpp).
  boost::two_bit_color_map<boost::typed_identity_property_map<int64_t>> color(static_cast<size_t>(n));
  boost::cuthill_mckee_ordering(g, starts, std::back_inserter(order), color, boost::make_out_degree_map(g));
  DGCN_ASSERT(static_cast<int64_t>(order.size()) == n);
  return order;
}

}  // namespace

std::vector<int64_t> rcm_ordering(const Csr& g, int num_threads) {
  require_whole_graph(g, "rcm ordering");
  // Boost's Cuthill-McKee visitor keeps queue positions in an int.
  DGCN_CHECK(g.num_nodes() <= INT32_MAX, "rcm: {} nodes is beyond Boost's Cuthill-McKee (at most {})",
             g.num_nodes(), INT32_MAX);
  const Csr u = undirected_csr(g, num_threads);
  std::vector<int64_t> order = u.visit_indices([&](auto idx) {
    using Id = typename decltype(idx)::value_type;
    return cuthill_mckee<Id>(u);
  });
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<int64_t> inverse_permutation(std::span<const int64_t> perm, int64_t num_nodes,
                                         const std::string& what) {
  DGCN_CHECK(static_cast<int64_t>(perm.size()) == num_nodes, "{}: has {} entries for {} nodes", what,
             perm.size(), num_nodes);
  std::vector<int64_t> inv(static_cast<size_t>(num_nodes), -1);
  for (int64_t i = 0; i < num_nodes; ++i) {
    const int64_t old = perm[i];
    DGCN_CHECK(old >= 0 && old < num_nodes, "{}: entry {} is {}, not a node id in [0, {})", what, i, old,
               num_nodes);
    DGCN_CHECK(inv[old] < 0, "{}: node {} appears twice (entries {} and {}), so this is not a permutation",
               what, old, inv[old], i);
    inv[old] = i;
  }
  return inv;
}

namespace {

Buffer rename_split(const Buffer& split, std::span<const int64_t> inv) {
  std::vector<int64_t> ids;
  ids.reserve(split.size() / sizeof(int64_t));
  for (int64_t v : split.as<int64_t>()) ids.push_back(inv[v]);
  std::sort(ids.begin(), ids.end());
  return Buffer::from_vector(std::move(ids));
}

template <class Id>
Csr permute_csr(const Csr& g, std::span<const int64_t> perm, std::span<const int64_t> inv, int threads) {
  const int64_t n = g.num_nodes();
  auto p = g.indptr();
  auto idx = g.indices<Id>();
  MutableBuffer indptr = Buffer::allocate(static_cast<size_t>(n + 1) * sizeof(int64_t));
  auto q = indptr.as_mutable<int64_t>();
  q[0] = 0;
  for (int64_t i = 0; i < n; ++i) q[i + 1] = q[i] + (p[perm[i] + 1] - p[perm[i]]);
  MutableBuffer indices = Buffer::allocate(static_cast<size_t>(g.num_edges()) * sizeof(Id));
  auto out = indices.as_mutable<Id>();
  // inv at the CSR's own width: every entry looks its neighbour up at random,
  // and a 4-byte table is half the cache footprint of an 8-byte one.
  std::vector<Id> new_id(inv.begin(), inv.end());
  parallel_for_chunks(n, 4096, threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t old = perm[i];
      Id* row = out.data() + q[i];
      const int64_t len = p[old + 1] - p[old];
      for (int64_t k = 0; k < len; ++k) row[k] = new_id[idx[p[old] + k]];
      std::sort(row, row + len);
    }
  });
  return Csr(n, std::move(indptr), std::move(indices), g.id_width(), "permuted csr");
}

std::string metadata_with(const std::string& metadata, const nlohmann::json& entry) {
  nlohmann::json j = nlohmann::json::parse(metadata, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) j = {{"metadata", metadata}};
  if (!j.contains("reorder") || !j["reorder"].is_array()) {
    nlohmann::json list = nlohmann::json::array();
    if (j.contains("reorder")) list.push_back(j["reorder"]);
    j["reorder"] = list;
  }
  j["reorder"].push_back(entry);
  return j.dump();
}

nlohmann::json to_json(const Bandwidth& b) {
  return {{"max", b.max}, {"mean", b.mean}};
}

}  // namespace

GraphStore permute(const GraphStore& s, std::span<const int64_t> perm, int num_threads,
                   const std::string& method, PermuteReport* report) {
  const int64_t n = s.num_nodes();
  const std::vector<int64_t> inv = inverse_permutation(perm, n, "permute: " + method + " order");
  GraphStore out;
  out.graph = s.graph.visit_indices([&](auto idx) {
    using Id = typename decltype(idx)::value_type;
    return permute_csr<Id>(s.graph, perm, inv, num_threads);
  });
  copy_node_rows(s, perm, out, num_threads);
  out.train = rename_split(s.train, inv);
  out.valid = rename_split(s.valid, inv);
  out.test = rename_split(s.test, inv);
  // The source ids follow their nodes: new node i is old node perm[i].
  out.source_ids = s.source_ids.empty() ? Buffer::from_vector(std::vector<int64_t>(perm.begin(), perm.end()))
                                        : gather_rows(s.source_ids, sizeof(int64_t), perm, num_threads);

  PermuteReport r{bandwidth(s.graph, num_threads), bandwidth(out.graph, num_threads)};
  out.metadata_json = metadata_with(
      s.metadata_json,
      {{"method", method}, {"bandwidth_before", to_json(r.before)}, {"bandwidth_after", to_json(r.after)}});
  if (report != nullptr) *report = r;
  return out;
}

}  // namespace dgcn

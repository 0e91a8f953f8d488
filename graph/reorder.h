// Node reordering: reverse Cuthill-McKee (RCM) and applying any node
// permutation to a whole store. RCM numbers nodes so that neighbours get
// nearby ids (a small bandwidth), which puts a node's neighbours' features
// close together in memory and makes the sampler's gathers more local.
//
//   path 0 - 3 - 1 - 4 - 2      an end-to-end order (what RCM finds here, up to
//   bandwidth max 3, mean 2.5   direction): perm = [2, 4, 1, 3, 0]  (perm[new] = old)
//                                           inv  = [4, 2, 0, 3, 1]  (inv[old] = new)
//   permuted: 0 - 1 - 2 - 3 - 4, bandwidth max 1, mean 1
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/graph_store.h"

namespace dgcn {

// |u - v| over the CSR entries u -> v: the largest and the mean (0 for no
// entries). Exact and independent of the thread count.
struct Bandwidth {
  int64_t max = 0;
  double mean = 0.0;
};
Bandwidth bandwidth(const Csr& g, int num_threads);

// The reverse Cuthill-McKee order of `g` as perm[new_id] = old_id. The order
// itself is boost::cuthill_mckee_ordering through graph/boost_adaptor.h,
// reversed; each component starts from a pseudo-peripheral node found by
// George-Liu's search (see Note [RCM starting nodes] in reorder.cpp).
// A directed CSR is ordered by its undirected version. Depends only on the
// graph, not on the thread count.
std::vector<int64_t> rcm_ordering(const Csr& g, int num_threads);

// inv[old] = new for perm[new] = old. Throws dgcn::Error naming `what` when
// perm does not hold each of 0..num_nodes-1 exactly once.
std::vector<int64_t> inverse_permutation(std::span<const int64_t> perm, int64_t num_nodes,
                                         const std::string& what = "permutation");

struct PermuteReport {
  Bandwidth before, after;
};

// The store with node perm[i] renamed to i, applied to every node array:
// CSR rows moved and their neighbour ids renamed (rows re-sorted by
// neighbour id, as build_csr makes them; the id width is kept), features,
// labels, degrees, and train/valid/test renamed and re-sorted. Appends
// {"method": method, "bandwidth_before": .., "bandwidth_after": ..} to the
// "reorder" list of metadata_json (which is wrapped as {"metadata": text}
// first when it is not a JSON object). Throws dgcn::Error when perm is not a
// permutation of the store's nodes. Writes `report` when given.
GraphStore permute(const GraphStore& store, std::span<const int64_t> perm, int num_threads,
                   const std::string& method = "custom", PermuteReport* report = nullptr);

}  // namespace dgcn

// What the neighbour sampler produces for one mini-batch and what the model
// consumes: the sampled nodes and one bipartite block per GCN layer.
//
// Node numbering is a prefix extension: n_id lists global ids, seeds first,
// then the nodes first reached at hop 1 (in order of discovery), then hop 2,
// ... So the nodes within h hops are exactly n_id[0 .. nodes_within(h)), and
// a block's dst nodes are the first num_dst of its src nodes.
//
// Each node's neighbours are sampled once, at the hop where it was first
// reached, with that hop's fanout (fanouts[0] for the seeds). Layer l of L
// aggregates into the nodes within L-1-l hops, over their sampled edges, so
// every block is a row prefix of the previous one (PyG's trimmed subgraphs).
//
// Example, seeds {7}, fanouts [2, 1] on a graph where 7 -> {3, 9, 4},
// 3 -> {7, 5}, 9 -> {1}:
//   n_id = [7, 3, 9, 5, 1]              (hop 0: 7; hop 1: 3, 9; hop 2: 5, 1)
//   num_nodes_per_hop = [1, 2, 2], num_edges_per_hop = [2, 2]
//   blocks[0] (first layer): dst = {7, 3, 9} (3 nodes), src = all 5 nodes
//       indptr = [0, 2, 3, 4], indices = [1, 2, 3, 4]   (7->3, 7->9, 3->5, 9->1)
//   blocks[1] (last layer):  dst = {7} (1 node), src = {7, 3, 9} (3 nodes)
//       indptr = [0, 2], indices = [1, 2]               (7->3, 7->9)
#pragma once

#include <cstdint>
#include <vector>

namespace dgcn {

// One layer's message-passing structure: row r (a dst node, local id r)
// aggregates from local src ids indices[indptr[r] .. indptr[r+1]).
// Self-loops are not stored; dst node r is src node r.
struct Block {
  int64_t num_dst = 0;
  int64_t num_src = 0;
  std::vector<int64_t> indptr;   // num_dst + 1 entries
  std::vector<int32_t> indices;  // local src ids in [0, num_src)
  int64_t num_edges() const { return static_cast<int64_t>(indices.size()); }
};

struct SampledBatch {
  int64_t epoch = 0;
  int64_t index = 0;      // batch index within this rank's epoch
  int64_t num_seeds = 0;  // n_id[0 .. num_seeds) are the seeds
  std::vector<int64_t> n_id;
  // num_nodes_per_hop[h]: nodes first reached at hop h (h = 0: the seeds);
  // num_edges_per_hop[h]: edges sampled from hop-h nodes (h < num_layers).
  std::vector<int64_t> num_nodes_per_hop;
  std::vector<int64_t> num_edges_per_hop;
  // In forward order: blocks[0] is the first GCN layer (widest), blocks.back()
  // has the seeds as its dst nodes.
  std::vector<Block> blocks;
  // degrees[i]: the full-graph degree of n_id[i], when the sampler had to
  // fetch it (a partitioned graph, whose ranks hold only their own nodes'
  // degrees); empty when the store at hand has every node's.
  std::vector<int32_t> degrees;

  int64_t num_layers() const { return static_cast<int64_t>(blocks.size()); }
  // Nodes within h hops of the seeds.
  int64_t nodes_within(int64_t h) const {
    int64_t n = 0;
    for (int64_t i = 0; i <= h && i < static_cast<int64_t>(num_nodes_per_hop.size()); ++i) {
      n += num_nodes_per_hop[i];
    }
    return n;
  }
};

}  // namespace dgcn

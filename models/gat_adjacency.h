// The edge structure GAT attends over (PyG's GATConv with add_self_loops):
// each dst node's incoming edges with exactly one self-loop, for sampled
// blocks and for full-graph rows. Plain C++; the tensor side (models/gat.h)
// writes straight into tensor memory through the spans.
//
// Note [GAT self-loops]
// PyG's GATConv removes the self-loops an edge_index already has and adds
// one per node, so a node attends to itself exactly once whatever the data
// holds. A sampled block has no self-loop of its own unless the graph has
// one (dst node i is src node i, so an edge i -> i of the graph can be
// sampled); both builders here drop those and write i itself first, then
// the other neighbours in block order. The values are all 1: GAT computes its
// own weights (the attention), the structure is what it needs; 1s keep the
// CsrTensor a valid unweighted adjacency for spmm.
//
// Example: dst 0 with sampled neighbours {3, 0, 4}: indices [0, 3, 4].
#pragma once

#include <cstdint>
#include <span>

#include "base/parallel.h"
#include "graph/csr.h"
#include "models/gcn_norm.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

// Entries of the GAT structure of `block`: its edges without self-loops,
// plus one self-loop per dst node.
int64_t gat_block_nnz(const Block& block);

// Fills `out` (indptr [num_dst + 1], indices and values [gat_block_nnz]),
// rows in chunks on `loop`.
void gat_block_structure(const Block& block, const NormalizedCsrOut& out, const ChunkLoop& loop);

// The rows `rows` of the full graph, each with its self-loop, indices global
// node ids (int32: the graph must have < 2^31 nodes), for layer-wise
// full-neighbour inference. Size indices and values with gat_full_rows_nnz().
int64_t gat_full_rows_nnz(const Csr& graph, std::span<const int64_t> rows);
void gat_full_rows_structure(const Csr& graph, std::span<const int64_t> rows, const NormalizedCsrOut& out,
                             const ChunkLoop& loop);

}  // namespace dgcn

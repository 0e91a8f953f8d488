// A sampled block in the layouts the Python package hands to PyG-style
// layers (python/dgcn/loader.py): an edge_index [2, E] (row 0 the source,
// row 1 the target, PyG's flow "source_to_target") sorted by target, and its
// CSC pointer over every node of the batch, so that a layer can compute
// from it without sorting the edges again.
//
// Example (sampling/sampled_batch.h's): blocks[0] with indptr [0, 2, 3, 4],
// indices [1, 2, 3, 4] over 5 nodes gives
//   src    = [1, 2, 3, 4]
//   dst    = [0, 0, 1, 2]
//   colptr = [0, 2, 3, 4, 4, 4]   (nodes 3 and 4, the last hop, have no row)
#pragma once

#include <cstdint>
#include <span>

#include "sampling/sampled_batch.h"

namespace dgcn {

// Writes `block`'s edges into src and dst (block.num_edges() each) and its
// CSC pointer into colptr (num_nodes + 1 entries, num_nodes >= block.num_dst:
// the targets after the block's rows get none). Throws dgcn::Error when a
// span has another size.
void block_to_edge_index(const Block& block, int64_t num_nodes, std::span<int64_t> src,
                         std::span<int64_t> dst, std::span<int64_t> colptr);

}  // namespace dgcn

// A sampled batch in the layouts the Python package hands to PyG-style
// layers (python/dgcn/loader.py): an edge_index [2, E] (row 0 the source,
// row 1 the target, PyG's flow "source_to_target") sorted by target, and its
// CSC pointer over every node of the batch, so that a layer can compute
// from it without sorting the edges again; with the batch's other index
// arrays (PygArrays), laid out by the loader's workers.
//
// Example (sampling/sampled_batch.h's): blocks[0] with indptr [0, 2, 3, 4],
// indices [1, 2, 3, 4] over 5 nodes gives
//   src    = [1, 2, 3, 4]
//   dst    = [0, 0, 1, 2]
//   colptr = [0, 2, 3, 4, 4, 4]   (nodes 3 and 4, the last hop, have no row)
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "sampling/batch_memory.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

// Writes `block`'s edges into src and dst (block.num_edges() each) and its
// CSC pointer into colptr (num_nodes + 1 entries, num_nodes >= block.num_dst:
// the targets after the block's rows get none). Throws dgcn::Error when a
// span has another size.
void block_to_edge_index(const Block& block, int64_t num_nodes, std::span<int64_t> src,
                         std::span<int64_t> dst, std::span<int64_t> colptr);

// Every node's class and split membership, read into each batch's y and
// split masks: spans over memory the caller keeps alive, or both empty.
struct NodeLabels {
  std::span<const int32_t> classes;     // a class or -1, a node
  std::span<const uint8_t> split_bits;  // bit k: in split k (train, val, test)
  bool empty() const { return classes.empty(); }
};

// One batch's index arrays as PyG's Data holds them, in one buffer that
// `lease` keeps alive: n_id [num] int64; edge_index's rows src and dst
// [m] int64 each, blocks[0]'s edges (every sampled edge once: its rows are
// in n_id order, so hop h's edges come h-th); colptr [num + 1] int64, their
// CSC pointer; degree [num] int32, the full graph's; and with NodeLabels, y
// [num] int64 and masks [3 x num] bool (train, val, test), else both empty.
struct PygArrays {
  std::span<int64_t> n_id, src, dst, colptr;
  std::span<int32_t> degree;
  std::span<int64_t> y;
  std::span<bool> masks;
  std::shared_ptr<void> lease;
};

// Lays `batch` out from `pool`'s memory. The degrees are batch.degrees where
// the sampler fetched them (a partition's), else full_degree[n_id]. Throws
// dgcn::Error when labels' spans differ in size or a node id is outside them
// or full_degree.
PygArrays lay_out_for_pyg(const SampledBatch& batch, std::span<const int32_t> full_degree,
                          const NodeLabels& labels, BatchMemoryPool& pool);

}  // namespace dgcn

// The one model of an ogbn-products sampled batch that the SpMM and DDP
// benchmarks measure on, without a graph: the nodes a hop reaches are
// numbered in discovery order (as the sampler numbers them), and each
// sampled neighbour is a node not seen before with probability
// new_fraction[h] at hop h, else one seen before, uniformly. The defaults
// give ~140k dst rows, ~520k src nodes and ~800k entries in the first
// layer, the sizes of a [15, 10, 5] batch of 1024 seeds on ogbn-products.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dgcn {

struct ProductsBatchSpec {
  std::vector<int64_t> fanouts{15, 10, 5};  // hop 0 first
  // Per hop (the last value repeats for further hops).
  std::vector<double> new_fraction{0.97, 0.85, 0.6};
  int64_t seeds = 1024;
  uint64_t seed = 1;  // of the draws
};

// The batch as one CSR over all its expanded nodes: row r lists the
// neighbours sampled for node r (rows of hop h follow those of hop h-1).
struct ProductsBatch {
  std::vector<int64_t> indptr;   // [rows + 1]
  std::vector<int32_t> indices;  // local node ids, < num_nodes()
  // within[h]: the nodes within h hops of the seeds (within[0] = seeds).
  std::vector<int64_t> within;

  int64_t num_rows() const { return static_cast<int64_t>(indptr.size()) - 1; }
  int64_t num_nodes() const { return within.back(); }
  int64_t num_layers() const { return static_cast<int64_t>(within.size()) - 1; }
  // Layer l of a num_layers() GCN (forward order, 0 the widest) is the first
  // layer_rows(l) rows over the first layer_cols(l) columns: blocks nest.
  int64_t layer_rows(int64_t l) const { return within[static_cast<size_t>(num_layers() - 1 - l)]; }
  int64_t layer_cols(int64_t l) const { return within[static_cast<size_t>(num_layers() - l)]; }
  int64_t layer_nnz(int64_t l) const { return indptr[static_cast<size_t>(layer_rows(l))]; }
};

// Throws dgcn::Error on empty fanouts or new_fraction, or a negative fanout.
ProductsBatch products_batch(const ProductsBatchSpec& spec);

}  // namespace dgcn

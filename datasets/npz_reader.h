// Reader of the gnn-benchmark .npz layout (Shchur et al.; cora.npz,
// citeseer.npz, amazon_electronics_*.npz, ...):
//
//   adj_data, adj_indices, adj_indptr, adj_shape      the graph, scipy CSR parts
//   attr_data, attr_indices, attr_indptr, attr_shape  sparse features, or
//   attr_matrix                                       dense features (or none)
//   labels                                            int class per node (-1: none)
//
// Text arrays (node_names, attr_names, class_names, idx_to_node, ...) are
// skipped. The file carries no split, so one is made from --split and --seed.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/splits.h"
#include "graph/csr_builder.h"
#include "graph/graph_store.h"

namespace dgcn {

struct NpzOptions {
  std::string file;         // F.npz
  EdgeOptions edges;        // default: symmetrize, drop loops/duplicates
  int num_threads = 0;      // 0 = every core
  int64_t num_classes = 0;  // 0 = largest label + 1, else labels must be below it
  SplitSpec split = parse_split_spec("per-class:20,valid:500,test:1000");
  uint64_t seed = 0;
  // Sparse features become dense: an attr_shape whose dense float32 form
  // needs more bytes than this is an error (0 = this machine's memory).
  uint64_t max_feature_bytes = 0;
};

GraphStore read_npz_dataset(const NpzOptions& options);

}  // namespace dgcn

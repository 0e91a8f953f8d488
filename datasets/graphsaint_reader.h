// Reader of the GraphSAINT layout that PyG's Flickr/Yelp/AmazonProducts use:
//
//   DIR/adj_full.npz    scipy.sparse CSR of the whole graph (save_npz: data,
//                       indices, indptr, shape, format; compressed or not)
//   DIR/feats.npy       float32 or float64 [N, F]
//   DIR/class_map.json  {"<node id>": [0, 1, 0, ...] (multi-hot, C classes)
//                        or "<node id>": c (single-label)} for every node
//   DIR/role.json       {"tr": [ids], "va": [ids], "te": [ids]}
//
// class_map.json runs to hundreds of MB for AmazonProducts (1.6 M nodes x 107
// classes); it is parsed as a stream of SAX events straight into the label
// bits, never as a document tree.
#pragma once

#include <string>

#include "graph/csr_builder.h"
#include "graph/graph_store.h"

namespace dgcn {

struct GraphSaintOptions {
  std::string root;         // DIR holding adj_full.npz, or PyG's dataset folder with raw/ inside
  EdgeOptions edges;        // default: symmetrize, drop loops/duplicates
  int num_threads = 0;      // 0 = every core
  int64_t num_classes = 0;  // single-label only: 0 = largest label + 1, else labels must be below it
};

// Reads DIR into a validated GraphStore (multi-label when class_map holds lists).
GraphStore read_graphsaint(const GraphSaintOptions& options);

// The labels of class_map.json for nodes [0, num_nodes): sets store.task,
// num_classes and labels. Exposed for tests.
void read_class_map(const std::string& path, int64_t num_nodes, int64_t num_classes, GraphStore& store);

}  // namespace dgcn

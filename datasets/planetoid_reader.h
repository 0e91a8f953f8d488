// Reader of the Planetoid datasets (Cora, CiteSeer, PubMed) as PyG's
// `Planetoid` dataset keeps them: DIR/raw/ind.<name>.{x,tx,allx,y,ty,ally,
// graph,test.index} (or the files directly in DIR), with the standard public
// split built as PyG builds it (torch_geometric/io/planetoid.py):
//
//   allx/ally: the first N_all nodes (features, one-hot labels); x/y: the
//   first len(y) of them, the training nodes (140 for Cora);
//   tx/ty: the test nodes, row k is node test.index[k];
//   train: nodes [0, len(y)), valid: the next 500, test: test.index (1000);
//   graph: {node: [neighbours]} (self-loops and repeats dropped, symmetrized
//   by default like every reader).
//
// CiteSeer's test.index has gaps (15 isolated nodes that have no test row):
// as PyG does, the nodes between the smallest and largest test index all
// exist, the missing ones with zero features; they belong to no split and get
// no label (-1; PyG's argmax of their zero one-hot row says class 0).
//
// The pickles are read by datasets/pickle.h, which executes nothing.
#pragma once

#include <cstdint>
#include <string>

#include "graph/csr_builder.h"
#include "graph/graph_store.h"

namespace dgcn {

struct PlanetoidOptions {
  std::string root;  // DIR holding raw/ind.<name>.* or ind.<name>.*
  std::string name;  // cora, citeseer or pubmed (as in the file names; case-insensitive)
  EdgeOptions edges;
  int num_threads = 0;  // 0 = every core
};

GraphStore read_planetoid(const PlanetoidOptions& options);

// The folder of `options` that holds ind.<name>.x: root/raw or root itself.
// Throws naming both places when neither does.
std::string planetoid_folder(const PlanetoidOptions& options);

}  // namespace dgcn

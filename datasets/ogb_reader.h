// Reader of the OGB node-property-prediction layout, as ogbn-products ships:
//
//   DIR/raw/edge.csv.gz            "src,dst" per line (one line per undirected edge)
//   DIR/raw/node-feat.csv.gz       N lines of F comma-separated floats (optional)
//   DIR/raw/node-label.csv.gz      N lines, one class id: "3", "3.0", or "nan" (unlabelled)
//   DIR/raw/num-node-list.csv.gz   N
//   DIR/raw/num-edge-list.csv.gz   number of lines of edge.csv.gz
//   DIR/split/<name>/{train,valid,test}.csv.gz   one node id per line
//
// (Each .csv.gz may also be a plain .csv.) There must be exactly one split
// folder (products: sales_ranking). The big files are streamed: one thread
// inflates into bounded chunks of whole lines, the others parse them, so
// memory holds the parsed arrays, never the text. Counts are checked against
// num-node-list / num-edge-list; errors name the file, the line and the value.
#pragma once

#include <cstdint>
#include <string>

#include "datasets/line_chunks.h"
#include "graph/csr_builder.h"
#include "graph/graph_store.h"

namespace dgcn {

struct OgbOptions {
  std::string root;         // DIR, holding raw/ and split/
  EdgeOptions edges;        // clean-ups of the edge list (default: symmetrize, drop loops/duplicates)
  int num_threads = 0;      // 0 = every core
  int64_t num_classes = 0;  // 0 = largest label + 1; else labels must be below it
  size_t chunk_bytes = kDefaultChunkBytes;
};

// Reads DIR into a validated single-label GraphStore.
GraphStore read_ogb(const OgbOptions& options);

}  // namespace dgcn

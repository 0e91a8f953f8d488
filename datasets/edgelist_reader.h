// Reader of plain edge lists in the SNAP style: one "src dst" pair per line,
// separated by spaces or tabs, '#' lines are comments, blank lines are
// skipped; plain or gzip-compressed. Graph only (Task::kNone, no features, no
// splits). Streamed and parsed in parallel like the OGB reader. Ids with
// large gaps are renumbered densely, the file's ids kept as node ids (Note
// [Sparse edge list ids]), so memory follows the file's size.
//
//   # FromNodeId  ToNodeId
//   0 1
//   1 2
#pragma once

#include <cstdint>
#include <string>

#include "datasets/line_chunks.h"
#include "graph/csr_builder.h"
#include "graph/graph_store.h"

namespace dgcn {

struct EdgeListOptions {
  std::string file;
  EdgeOptions edges;      // default: symmetrize, drop loops/duplicates
  int num_threads = 0;    // 0 = every core
  int64_t num_nodes = 0;  // 0 = largest id + 1 (or renumbered); else every id must be below it
  size_t chunk_bytes = kDefaultChunkBytes;
};

GraphStore read_edgelist(const EdgeListOptions& options);

}  // namespace dgcn
